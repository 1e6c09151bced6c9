import Glibc

/// Large test payloads, built and compared at memcpy/memcmp speed: a debug
/// build's `(0..<n).map` over megabytes holds a cooperative thread for
/// seconds, and on two cores that starves every other test.
public enum Payload {
    /// `count` bytes of a non-repeating-looking pattern (a 4093-byte prime
    /// period, so no record or chunk boundary lines up with it), seeded.
    public static func bytes(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        var period = [UInt8](repeating: 0, count: 4093)
        var value = seed
        for index in period.indices {
            value = value &* 31 &+ 17
            period[index] = value
        }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count { result += period.prefix(count - result.count) }
        return result
    }

    /// Whether two byte arrays are equal (memcmp, not an element loop).
    public static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }
}
