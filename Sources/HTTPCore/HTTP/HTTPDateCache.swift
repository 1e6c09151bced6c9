import Glibc
import Locking

/// The `Date` field of responses, formatted at most once per second of its clock and
/// shared by every connection (and every loop thread: the state sits behind a lock, held
/// only to compare the second and, once a second, to swap in the new text).
///
/// Hands out both forms a response needs: the value as a `String` (`HTTPDate.now()`) and
/// the whole field line as bytes, `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n`, ready to be
/// appended to a response head.
public final class HTTPDateCache: Sendable {
    /// The cache of the wall clock, used by the server.
    public static let shared = HTTPDateCache { Int(time(nil)) }

    /// What one second formats to.
    private struct Entry {
        var second: Int
        var value: String
        var fieldLine: [UInt8]
    }

    /// Seconds since the Unix epoch; a parameter so tests can drive the refresh.
    private let clock: @Sendable () -> Int
    private let entry: Locked<Entry>

    /// - Parameter clock: the current time in whole seconds since the Unix epoch.
    public init(clock: @escaping @Sendable () -> Int) {
        self.clock = clock
        entry = Locked(Entry(second: Int.min, value: "", fieldLine: []))
    }

    /// The `Date` value (IMF-fixdate) for the clock's current second.
    public var value: String {
        let second = clock()
        if let value = entry.withLock({ $0.second == second ? $0.value : nil }) { return value }
        return refresh(second).value
    }

    /// `Date: <IMF-fixdate>\r\n` for the clock's current second.
    public var fieldLine: [UInt8] {
        let second = clock()
        if let line = entry.withLock({ $0.second == second ? $0.fieldLine : nil }) { return line }
        return refresh(second).fieldLine
    }

    /// Formats `second` (outside the lock) and keeps it. Two threads crossing the second
    /// at once both format it; the result is the same.
    private func refresh(_ second: Int) -> Entry {
        let value = HTTPDate.format(second)
        let fresh = Entry(second: second, value: value, fieldLine: Array("Date: \(value)\r\n".utf8))
        entry.withLock { $0 = fresh }
        return fresh
    }
}
