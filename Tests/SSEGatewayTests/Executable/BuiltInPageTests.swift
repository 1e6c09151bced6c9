import Foundation
import Testing
import TestSupport

/// The page is compiled into `sse-gateway`: started in `/` without `--public`,
/// it serves the same bytes as `public/` holds; `--public DIR` serves DIR instead.
@Suite(.serialized)
struct BuiltInPageTests {
    /// Runs the executable with `/` as its working directory and `arguments`.
    private func startInRoot(_ arguments: [String]) async throws -> (ChildProcess, Int) {
        let child = try ChildProcess("/bin/sh", ["-c", "cd / && exec \"$0\" \"$@\"", gatewayBinary, "--port", "0"] + arguments)
        let pattern = #/listening on 127\.0\.0\.1:(\d+)/#
        _ = await child.stderr.wait(upTo: 10) { $0.contains(pattern) }
        guard let match = child.stderr.text.firstMatch(of: pattern), let port = Int(match.1) else {
            await child.stop()
            throw HarnessFailure("no start line from sse-gateway; stderr: \(child.stderr.text)")
        }
        return (child, port)
    }

    /// From `/`, `GET /`, a script and the stylesheet answer `200` with `public/`'s bytes and types; a missing file is `404`.
    @Test func servesThePageFromAnyDirectory() async throws {
        let (child, port) = try await startInRoot([])
        do {
            try await checkPage(port: port, startLine: child.stderr.text)
        } catch {
            await child.stop()
            throw error
        }
        await child.stop()
    }

    private func checkPage(port: Int, startLine: String) async throws {
        #expect(startLine.contains("serving the built-in page"))
        let base = "http://127.0.0.1:\(port)"
        for (path, file) in [("/", "index.html"), ("/js/stream.js", "js/stream.js"), ("/style.css", "style.css")] {
            let body = try await curl(["-s", "-f", base + path])
            let onDisk = try String(contentsOfFile: packageRoot + "/public/" + file, encoding: .utf8)
            #expect(body == onDisk, "GET \(path)")
        }
        let type = try await curl(["-s", "-o", "/dev/null", "-w", "%{content_type}", base + "/"])
        #expect(type == "text/html; charset=utf-8")
        let missing = try await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/no-such-file.js"])
        #expect(missing == "404")
        // Revalidation works on the embedded files as on a directory's.
        let etag = try await curl(["-s", "-I", base + "/style.css"])
            .split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }?.dropFirst(5)
            .trimmingCharacters(in: .whitespaces) ?? ""
        #expect(!etag.isEmpty)
        let revalidated = try await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}",
                                          "-H", "If-None-Match: \(etag)", base + "/style.css"])
        #expect(revalidated == "304")
    }

    /// `--public DIR` wins over the built-in page.
    @Test func publicFlagOverrides() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "other page\n".write(to: directory.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        let (child, port) = try await startInRoot(["--public", directory.path])
        let body = try? await curl(["-s", "http://127.0.0.1:\(port)/"])
        let script = try? await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/js/stream.js"])
        await child.stop()
        #expect(body == "other page\n")
        #expect(script == "404")
    }

    /// Runs curl to its end and returns what it printed; fails the test if curl fails.
    private func curl(_ arguments: [String]) async throws -> String {
        let run = try await runToExit("/usr/bin/env", ["curl"] + arguments)
        guard run.ending == .exit(0) else {
            throw HarnessFailure("curl \(arguments) ended \(String(describing: run.ending)): \(run.stderr)")
        }
        return run.stdout
    }
}
