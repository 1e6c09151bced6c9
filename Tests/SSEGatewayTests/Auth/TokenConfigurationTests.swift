import GatewayAPI
import Testing
@testable import SSEGateway

/// The token options on the command line and in the environment, and the combinations refused at start.
struct TokenConfigurationTests {
    private let secret = String(repeating: "s", count: 32)

    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        guard case .run(let configuration) = try GatewayConfiguration.parse(arguments: arguments, environment: environment)
        else { return GatewayConfiguration() }
        return configuration
    }

    private func refusal(_ arguments: [String], _ environment: [String: String] = [:]) -> String? {
        do {
            _ = try parse(arguments, environment)
            return nil
        } catch {
            return error.message
        }
    }

    /// Flags and their environment variables set the four options.
    @Test func flagsAndEnvironment() throws {
        let flags = try parse(["--jwt-secret", secret, "--jwt-audience", "streams", "--subscribe-auth", "token"])
        #expect(flags.jwtSecret == secret && flags.jwtAudience == "streams" && flags.subscribeAuth == .token)
        let environment = try parse([], ["SSE_GATEWAY_JWT_PUBLIC_KEY": "/k.pem", "SSE_GATEWAY_JWT_AUDIENCE": "a",
                                         "SSE_GATEWAY_SUBSCRIBE_AUTH": "token"])
        #expect(environment.jwtPublicKey == "/k.pem" && environment.jwtAudience == "a" && environment.subscribeAuth == .token)
        #expect(try parse(["--subscribe-auth=open"]).subscribeAuth == .open)
        #expect(try parse([], ["SSE_GATEWAY_JWT_SECRET": secret]).jwtSecret == secret)
    }

    /// A secret under 32 bytes is refused naming the flag or variable, with its length and never its text.
    @Test func shortSecret() {
        let flag = refusal(["--jwt-secret", "short-secret"])
        #expect(flag == "invalid value for --jwt-secret: expected a secret of at least 32 bytes "
            + "(HS256 needs a key as long as its hash); this one has 12")
        let variable = refusal([], ["SSE_GATEWAY_JWT_SECRET": "short-secret"])
        #expect(variable?.hasPrefix("invalid value for SSE_GATEWAY_JWT_SECRET: ") == true)
        #expect(flag?.contains("short-secret") == false)
    }

    /// Both keys, `--subscribe-auth token` or `--jwt-audience` without a key, and an unknown mode are refused naming the flags.
    @Test func combinationsRefused() {
        #expect(refusal(["--jwt-secret", secret, "--jwt-public-key", "/k.pem"])?
            .hasPrefix("--jwt-secret (or SSE_GATEWAY_JWT_SECRET) and --jwt-public-key") == true)
        #expect(refusal(["--jwt-public-key", "/k.pem"], ["SSE_GATEWAY_JWT_SECRET": secret]) != nil)
        #expect(refusal(["--subscribe-auth", "token"])?.hasPrefix("--subscribe-auth token") == true)
        #expect(refusal(["--jwt-audience", "a"])?.hasPrefix("--jwt-audience") == true)
        #expect(refusal(["--subscribe-auth", "closed"]) == "invalid value 'closed' for --subscribe-auth: expected open or token")
    }

    /// `--help` lists the four options with their variables.
    @Test func helpListsThem() {
        let usage = GatewayConfiguration.usage
        for name in ["--jwt-secret SECRET", "--jwt-public-key PATH", "--jwt-audience AUD", "--subscribe-auth open|token",
                     "SSE_GATEWAY_JWT_SECRET", "SSE_GATEWAY_SUBSCRIBE_AUTH; default: open"] {
            #expect(usage.contains(name), "\(name)")
        }
        #expect(usage.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }
}
