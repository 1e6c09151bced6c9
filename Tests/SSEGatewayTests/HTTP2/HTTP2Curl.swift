import Foundation
import TestSupport

/// curl against a gateway process over HTTP/1.1 or HTTP/2 (`--http2-prior-knowledge`
/// in cleartext, `--http2` with ALPN over TLS), and its answers read back as status,
/// fields and body, so the two protocols' answers can be compared field by field.
struct CurlAnswer: Equatable, CustomStringConvertible {
    var version: String
    var status: Int
    /// Lower-cased names, sorted; less the fields HTTP/2 forbids and `Date`.
    var fields: [String]
    var body: String

    static let connectionSpecific: Set<String> = ["connection", "keep-alive", "transfer-encoding", "date"]

    /// Parses `curl -si` output: the status line, the fields, a blank line, the body.
    init(_ output: String) {
        let parts = output.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        version = statusLine.first.map(String.init) ?? ""
        status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        fields = head.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].lowercased()
            guard !Self.connectionSpecific.contains(name) else { return nil }
            return name + ": " + line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }.sorted()
        body = parts.dropFirst().joined(separator: "\r\n\r\n")
    }

    var description: String { "\(version) \(status) \(fields) \(body.debugDescription)" }
}

enum HTTPProtocol: String, CaseIterable {
    case http1
    case http2

    /// The curl option that makes curl speak this protocol to `transport`.
    func curlOption(_ transport: Transport) -> String {
        switch (self, transport) {
        case (.http1, _): return "--http1.1"
        case (.http2, .plain): return "--http2-prior-knowledge"
        case (.http2, .tls): return "--http2"
        }
    }
}

extension GatewayProcess {
    /// curl's output for one request over `protocol`; fails when curl does.
    func curl(_ protocol: HTTPProtocol, _ arguments: [String]) async throws -> String {
        let (base, options) = curlBase
        let arguments = options + [`protocol`.curlOption(transport)] + arguments.map {
            $0.hasPrefix("/") ? base + $0 : $0
        }
        let run = try await runToExit("/usr/bin/env", ["curl"] + arguments)
        // 28: `--max-time` ended a stream, as asked.
        guard run.ending == .exit(0) || (arguments.contains("--max-time") && run.ending == .exit(28)) else {
            throw HarnessFailure("curl \(arguments) ended \(String(describing: run.ending)): \(run.stderr)")
        }
        return run.stdout
    }
}
