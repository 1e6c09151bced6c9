import Foundation
import Glibc
import TestSupport

/// The `sse-load` executable, run as a child process so its thousands of
/// subscribers and its publishers load the machine, not this test process's
/// two pool threads (which every other test shares).
enum LoadTool {
    /// The binary: beside this test bundle (`swift test` builds every product),
    /// else in the package's debug or release build directory, else built once
    /// into a scratch directory of its own (`swift test` holds `.build`'s lock).
    static let binary: Result<String, HarnessFailure> = {
        var candidates: [String] = []
        if let testExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: testExecutable).deletingLastPathComponent().path + "/sse-load")
        }
        candidates += [packageRoot + "/.build/debug/sse-load", packageRoot + "/.build/release/sse-load"]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return .success(found)
        }
        let scratch = packageRoot + "/.build/reliability-tools"
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "--package-path", packageRoot, "--scratch-path", scratch,
                           "--product", "sse-load"]
        build.standardOutput = FileHandle.nullDevice
        build.standardError = FileHandle.nullDevice
        do {
            try build.run()
            build.waitUntilExit()
        } catch {
            return .failure(HarnessFailure("sse-load is not built and `swift build --product sse-load` failed: \(error)"))
        }
        let built = scratch + "/debug/sse-load"
        return FileManager.default.isExecutableFile(atPath: built)
            ? .success(built) : .failure(HarnessFailure("sse-load is not built and could not be built into \(scratch)"))
    }()

    /// Starts `sse-load --json` with `arguments` against the gateway on `port`.
    static func start(port: Int, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(try binary.get(), ["--url", "http://127.0.0.1:\(port)", "--json"] + arguments)
    }

    /// Waits for the run to end (up to `seconds`, then kills it) and returns its JSON report.
    static func report(of child: ChildProcess, upTo seconds: Double) async throws -> LoadReportJSON {
        let ending = await child.waitForExit(upTo: seconds)
        await child.stop()
        let output = await child.stdout.finish(upTo: 5)
        guard ending == .exit(0) else {
            throw HarnessFailure("sse-load ended \(ending.map { "\($0)" } ?? "still running after \(seconds) s"): "
                + "\(output) \(child.stderr.text)")
        }
        guard let line = output.split(separator: "\n").last,
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw HarnessFailure("sse-load printed no JSON report: \(output) \(child.stderr.text)")
        }
        return LoadReportJSON(object: object, line: String(line))
    }
}

/// `sse-load --json`'s report (bench/sse-load.md lists the keys).
struct LoadReportJSON {
    let object: [String: Any]
    /// The line as printed, for messages.
    let line: String

    /// A numeric figure; nil when absent or `null`.
    subscript(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }

    var error: String? { object["error"] as? String }
}
