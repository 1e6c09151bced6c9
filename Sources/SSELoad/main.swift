import Glibc
import HTTPCore

// sse-load: parse the command line, run the load, print the report.
// Exit 0 after a run (the report says whether anything was lost), 1 when the
// run cannot start, 2 for a bad command line.
func sseLoadMain() async -> Int32 {
    let configuration: LoadConfiguration
    do {
        switch try LoadCommandLine.parse(Array(CommandLine.arguments.dropFirst())) {
        case .help(let text):
            print(text, terminator: "")
            return 0
        case .run(let parsed):
            configuration = parsed
        }
    } catch {
        StandardError.write(error.diagnostic)
        return 2
    }
    let limit = DescriptorLimit.raiseToHard()
    let needed = configuration.descriptorsNeeded
    guard limit >= needed else {
        StandardError.write("sse-load: \(configuration.subscribers) subscribers and \(configuration.publishers) "
            + "publishers need \(needed) descriptors; the limit is \(limit) (raise it with ulimit -n)")
        return 1
    }
    let run: LoadRun
    do {
        run = try LoadRun(configuration: configuration)
    } catch {
        StandardError.write("sse-load: \(error.message)")
        return 1
    }
    let report = await run.run(showProgress: ProgressLine.isTerminal)
    print(configuration.json ? report.jsonLine : report.summary)
    return 0
}

exit(await sseLoadMain())
