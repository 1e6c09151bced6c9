import Foundation

/// The gateway's log: one line per start, stop and error on stderr, each with
/// a UTC timestamp. Writes are unbuffered so lines survive a crash.
enum Log {
    static func info(_ message: String) { emit("info", message) }
    static func warning(_ message: String) { emit("warning", message) }
    static func error(_ message: String) { emit("error", message) }

    private static func emit(_ level: String, _ message: String) {
        let stamp = Date().formatted(.iso8601)
        FileHandle.standardError.write(Data("\(stamp) sse-gateway \(level): \(message)\n".utf8))
    }
}
