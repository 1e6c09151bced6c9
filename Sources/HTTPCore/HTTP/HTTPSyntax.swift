/// Byte classes and byte-level comparisons of the HTTP/1.1 grammar (RFC 9110, RFC 9112),
/// shared by the request parser's pieces so every part judges bytes the same way.
enum HTTPSyntax {
    // Computed, not `static let`, so per-byte loops see constants rather than lazy globals.
    @inline(__always) static var cr: UInt8 { 0x0D }
    @inline(__always) static var lf: UInt8 { 0x0A }
    @inline(__always) static var space: UInt8 { 0x20 }
    @inline(__always) static var tab: UInt8 { 0x09 }
    @inline(__always) static var colon: UInt8 { 0x3A }
    @inline(__always) static var comma: UInt8 { 0x2C }
    @inline(__always) static var semicolon: UInt8 { 0x3B }
    @inline(__always) static var slash: UInt8 { 0x2F }
    @inline(__always) static var question: UInt8 { 0x3F }
    @inline(__always) static var asterisk: UInt8 { 0x2A }

    /// RFC 9110 `tchar`: the bytes a method or a field name may hold (`!#$%&'*+-.^_`|~`,
    /// digits and letters). A bit per byte in two words: a shift and a test, where the
    /// ranges took a chain of compares per byte of every method and field name.
    @inline(__always)
    static func isTokenChar(_ c: UInt8) -> Bool {
        isByte(c, in: (below64: 0x03FF_6CFA_0000_0000,  // ! # $ % & ' * + - . 0-9
                       from64: 0x57FF_FFFF_C7FF_FFFE))  // A-Z ^ _ ` a-z | ~
    }

    /// Whether the ASCII byte `c` is in the set given as a bit per byte (bytes 0–63 in
    /// `below64`, 64–127 in `from64`); never a byte of 128 or more.
    @inline(__always)
    static func isByte(_ c: UInt8, in set: (below64: UInt64, from64: UInt64)) -> Bool {
        switch c {
        case 0..<64: set.below64 >> UInt64(c) & 1 == 1
        case 64..<128: set.from64 >> UInt64(c - 64) & 1 == 1
        default: false
        }
    }

    /// Optional whitespace (`OWS`): SP or HTAB.
    @inline(__always)
    static func isWhitespace(_ c: UInt8) -> Bool { c == space || c == tab }

    /// A byte a field value may hold: visible ASCII, SP, HTAB or obs-text; never NUL, CR, LF,
    /// another control character or DEL.
    @inline(__always)
    static func isFieldValueByte(_ c: UInt8) -> Bool { c == tab || (c >= 0x20 && c != 0x7F) }

    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// Whether any byte of `word` is below `n` (at most 128). Exact as a yes or no: the
    /// lowest such byte borrows into its own high bit and none below it borrows; with no
    /// such byte nothing borrows, and a byte of 128 or more is masked by `~word`.
    @inline(__always)
    static func hasByte(in word: UInt64, below n: UInt8) -> Bool {
        (word &- 0x0101_0101_0101_0101 &* UInt64(n)) & ~word & 0x8080_8080_8080_8080 != 0
    }

    /// The index of the first byte below `n` (at most 128) in `bytes[start..<end]`, or `end`:
    /// eight bytes at a time, the word holding one answered by its flag's position (the
    /// lowest flagged byte of `hasByte(in:below:)` is exact: nothing borrows into it), then
    /// the bytes short of a word one by one.
    @inline(__always)
    static func firstByte(below n: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var i = start
        while i + 8 <= end {
            let word = UInt64(littleEndian: word(bytes, at: i))
            let flags = (word &- 0x0101_0101_0101_0101 &* UInt64(n)) & ~word & 0x8080_8080_8080_8080
            if flags != 0 { return i + flags.trailingZeroBitCount / 8 }
            i += 8
        }
        while i < end, bytes[i] >= n { i += 1 }
        return i
    }

    /// Whether any byte of `word` is `byte` (exact, as `hasByte(in:below: 1)` of the bytes
    /// that differ from it).
    @inline(__always)
    static func hasByte(in word: UInt64, equalTo byte: UInt8) -> Bool {
        hasByte(in: word ^ 0x0101_0101_0101_0101 &* UInt64(byte), below: 1)
    }

    /// The index of the first `byte` of `bytes` at or after `start`, or nil: eight bytes at
    /// a time while they last, then one by one. (`Collection.firstIndex(of:)` goes byte by
    /// byte: four of them over a publish's request line were about 620 instructions, issue 27.)
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        var index = start
        while index + 8 <= bytes.count && !hasByte(in: word(bytes, at: index), equalTo: byte) { index += 8 }
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// The eight bytes of `bytes` at `offset` as one word (in memory order).
    @inline(__always)
    static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// The value of a hexadecimal digit (either case), or nil.
    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    @inline(__always)
    static func lowercased(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    /// Whether `bytes` spell `lowercase` ignoring ASCII case. `lowercase` must be lowercase ASCII.
    /// Eight bytes at a time (the last word overlapping the one before it): a field name's
    /// compare was about 135 instructions byte by byte (issue 27).
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        let count = bytes.count
        guard count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: count)
        guard count >= 8 else {
            for i in 0..<count where lowercased(bytes[i]) != expected[i] { return false }
            return true
        }
        var i = 0
        while true {
            let at = min(i, count - 8)
            guard lowercased(word(bytes, at: at)) == word(expected, at: at) else { return false }
            i += 8
            if i >= count { return true }
        }
    }

    /// The eight bytes of `word` with each ASCII capital letter made small (others as
    /// they are): a capital's byte gets 0x20 added, found without a borrow between bytes
    /// (each byte's low seven bits plus a constant stays below 256).
    @inline(__always)
    static func lowercased(_ word: UInt64) -> UInt64 {
        let low7 = word & 0x7F7F_7F7F_7F7F_7F7F
        let fromA = low7 &+ 0x3F3F_3F3F_3F3F_3F3F  // high bit set where the byte's low seven bits are ≥ 0x41
        let pastZ = low7 &+ 0x2525_2525_2525_2525  // … ≥ 0x5B
        let capitals = (fromA ^ pastZ) & ~word & 0x8080_8080_8080_8080
        return word | capitals >> 2
    }

    /// Whether `bytes` spell `text` exactly (case-sensitive).
    @inline(__always)
    static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        let expected = text.utf8Start
        for i in 0..<bytes.count where bytes[i] != expected[i] { return false }
        return true
    }

    /// Whether `a` and `b` hold the same bytes ignoring ASCII case (either may be any case).
    static func equalsIgnoringCase(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where lowercased(a[i]) != lowercased(b[i]) { return false }
        return true
    }

    /// Whether `bytes` start with `lowercase` ignoring ASCII case. `lowercase` must be lowercase ASCII.
    static func hasPrefixIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        let n = lowercase.utf8CodeUnitCount
        guard bytes.count >= n else { return false }
        return equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: bytes[0..<n]), lowercase)
    }

    /// `bytes` without leading and trailing SP/HTAB.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0, end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// A String of `bytes` (invalid UTF-8 is repaired, which only obs-text in a field value can cause).
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// The elements of a comma-separated field value (RFC 9110 §5.6.1), each trimmed of OWS.
/// Yields empty elements too (`a,,b` yields three), so callers decide whether they are allowed;
/// an empty value yields one empty element.
struct HTTPListElements: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private var finished = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func next() -> UnsafeRawBufferPointer? {
        guard !finished else { return nil }
        var end = position
        while end < bytes.count, bytes[end] != HTTPSyntax.comma { end += 1 }
        let element = HTTPSyntax.trimmed(UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
        if end == bytes.count { finished = true } else { position = end + 1 }
        return element
    }
}
