import Testing
@testable import HTTPCore

/// The byte-level comparisons of `HTTPSyntax` that work a word at a time give what a byte
/// by byte comparison gives.
struct HTTPSyntaxTests {
    /// Every byte (0–255) at every position of the literals the parser compares names,
    /// values and schemes with (and two more, of one word and of one word and a byte), of
    /// lengths below, at and above a word (the last word overlapping the one before):
    /// equal ignoring case exactly when each byte, made small if it is an ASCII capital,
    /// is the expected one.
    @Test func equalsIgnoringCaseIsTheByteByByteAnswer() {
        let names: [StaticString] = ["host", "chunked", "expect", "close", "content-length", "transfer-encoding",
                                     "connection", "keep-alive", "100-continue", "http://", "https://",
                                     "abcdefgh", "abcdefghi"]
        var wrong: [String] = []
        for name in names {
            let expected = Array(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            for position in expected.indices {
                for byte in UInt8.min...UInt8.max {
                    var input = expected
                    input[position] = byte
                    let small = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                    let answer = input.withUnsafeBytes { HTTPSyntax.equalsIgnoringCase($0, name) }
                    if answer != (small == expected[position]) { wrong.append("\(name) with \(byte) at \(position)") }
                }
            }
            let capitals = expected.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            #expect(capitals.withUnsafeBytes { HTTPSyntax.equalsIgnoringCase($0, name) })
            #expect(!capitals.dropLast().withUnsafeBytes { HTTPSyntax.equalsIgnoringCase($0, name) })
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    /// Every byte in every lane of a word: only ASCII capitals change, each to its small letter.
    @Test func aWordIsMadeSmallBytewise() {
        var wrong: [String] = []
        for byte in UInt8.min...UInt8.max {
            for lane in 0..<8 {
                let filler: UInt8 = lane % 2 == 0 ? 0x5A : 0x41  // capitals around it too
                var bytes = [UInt8](repeating: filler, count: 8)
                bytes[lane] = byte
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let small = HTTPSyntax.lowercased(word)
                let expected = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
                if withUnsafeBytes(of: small, { Array($0) }) != expected { wrong.append("byte \(byte) in lane \(lane)") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    /// The first byte below a bound, from every start to every end of buffers up to three
    /// words long holding none, one anywhere, or one anywhere and a second right after it or
    /// last (and bytes of 128 and more, which are never below it): the index a byte by byte
    /// search gives.
    @Test func firstByteBelowIsTheByteByByteAnswer() {
        var wrong: [String] = []
        for length in 0...24 {
            for low in -1..<length {
                for second in [-1, low + 1, length - 1] where second == -1 || second > low {
                    var bytes = (0..<length).map { $0 % 3 == 0 ? UInt8(0xC3) : UInt8(0x41 + $0 % 26) }
                    if low >= 0 { bytes[low] = 0x0A }
                    if second >= 0 && second < length { bytes[second] = 0x0D }
                    bytes.withUnsafeBytes { raw in
                        for start in 0...length {
                            for end in start...length {
                                let expected = (start..<end).first { raw[$0] < 0x0E } ?? end
                                let found = HTTPSyntax.firstByte(below: 0x0E, in: raw, from: start, to: end)
                                if found != expected {
                                    wrong.append("length \(length), low bytes at \(low) and \(second), \(start)..<\(end): \(found)")
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }
}
