/// Writes the ASCII pieces of a short frame (an SSE `id:` line, a publish reply's JSON) into a
/// buffer on the stack, which the caller then appends to its array at once: an
/// `Array.append(contentsOf:)` costs 50–150 instructions whatever it appends, and these frames
/// were several appends each (issue 27). The caller sizes the buffer; each function returns
/// the index past what it wrote. Static and inlined: as nested functions capturing the index
/// they were calls, about 180 instructions a frame. Public, not `package`: `@inlinable package`
/// functions were not inlined into the gateway's module (calls seen in its disassembly).
public enum FrameWriter {
    /// Writes `text`'s bytes at `at`.
    @inlinable @inline(__always)
    public static func put(_ text: StaticString, into buffer: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        UnsafeMutableRawBufferPointer(rebasing: buffer[at...])
            .copyMemory(from: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        return at + text.utf8CodeUnitCount
    }

    /// Writes `value` in decimal at `at` (`digits` of them: `decimalDigits(value)`).
    @inlinable @inline(__always)
    public static func put(_ value: UInt64, digits: Int, into buffer: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        var rest = value
        for i in stride(from: at + digits - 1, through: at, by: -1) {
            buffer[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        return at + digits
    }

    /// How many decimal digits `value` has (1 for 0; 20 for `UInt64.max`).
    @inlinable @inline(__always)
    public static func decimalDigits(_ value: UInt64) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        return count
    }
}
