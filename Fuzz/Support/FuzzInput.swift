/// The fuzzer's input read as a few parameters off the front, then a payload.
///
/// Every target starts its input with control bytes (limits, cut points, flags) so that
/// libFuzzer mutates the parameters as freely as the payload. Reading past the end yields
/// zeros, so every input, even an empty one, is a valid case.
struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }

    /// The next byte, or 0 past the end.
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next two bytes, little-endian.
    mutating func uint16() -> Int { Int(byte()) | Int(byte()) << 8 }

    /// The next eight bytes, little-endian.
    mutating func uint64() -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, shift in value | UInt64(byte()) << (8 * UInt64(shift)) }
    }

    /// Up to `count` next bytes.
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        defer { position = max(position, end) }
        return position < end ? Array(bytes[position..<end]) : []
    }

    /// `count` cut points (two bytes each), to be reduced modulo a payload's length.
    mutating func cuts(count: Int) -> [Int] { (0..<count).map { _ in uint16() } }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] { take(bytes.count) }
}

/// `payload` cut at `cuts` (each taken modulo the payload's length, sorted, repeats
/// giving empty pieces): the same bytes as a connection might deliver them.
func pieces(_ payload: [UInt8], at cuts: [Int]) -> [[UInt8]] {
    guard !payload.isEmpty else { return [payload] }
    let points = cuts.map { $0 % (payload.count + 1) }.sorted()
    var out: [[UInt8]] = []
    var start = 0
    for point in points {
        out.append(Array(payload[start..<point]))
        start = point
    }
    out.append(Array(payload[start...]))
    return out
}

/// One piece per byte: the split that exercises every resume point.
func bytewise(_ payload: [UInt8]) -> [[UInt8]] { payload.map { [$0] } }

/// Traps (a libFuzzer crash, with the input saved) when an oracle does not hold.
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String, input: [UInt8]) {
    guard !condition else { return }
    fatalError("oracle failed: \(message())\ninput: \(String(decoding: input, as: UTF8.self).debugDescription)")
}
