import Foundation
import Glibc

// sse-gateway: parse the command line, run until SIGTERM/SIGINT, exit 0.
// A bad flag or an unusable TLS certificate or key exits 2 with a message;
// another failure to start (e.g. the port is taken) exits 1.
let outcome: CommandLineOutcome
do {
    outcome = try GatewayConfiguration.parse(arguments: Array(CommandLine.arguments.dropFirst()),
                                             environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data((error.diagnostic + "\n").utf8))
    exit(2)
}

switch outcome {
case .help(let text):
    print(text, terminator: "")
    exit(0)
case .version(let text):
    print(text)
    exit(0)
case .run(let configuration):
    let gateway: Gateway
    do {
        gateway = try Gateway(configuration: configuration)
    } catch let error as ConfigurationError {
        FileHandle.standardError.write(Data((error.diagnostic + "\n").utf8))
        exit(2)
    } catch {
        Log.error("cannot listen on \(configuration.host):\(configuration.port): \(error)")
        exit(1)
    }
    await gateway.run()
    exit(0)
}
