/// A command's arguments (its name first), already encoded as RESP bulk strings:
/// `$<length>\r\n<bytes>\r\n` each, binary-safe, in one growing byte array.
///
/// Promises: every argument is copied once, when appended; a run built once (the
/// constant arguments of a script, say) is appended to others as one copy; the
/// pipeline writes the array's header (`*<count>\r\n`) and these bytes into its
/// outgoing buffer, with no other encoding step. Nothing here allocates but the
/// array's growth (`reservingCapacity` avoids that too).
///
/// Why not hiredis's `redisFormatCommandArgv`: it formats through `sprintf` into a
/// buffer of its own that is copied again, about 5 % of a gateway's CPU per publish
/// on Redis (profiled, issue 24). Replies are still parsed by hiredis (`ReplyReader`).
public struct RedisArguments: Sendable, Equatable {
    /// How many arguments were appended.
    public private(set) var count = 0
    /// The encoded arguments, without the array header.
    private(set) var encoded: [UInt8] = []

    public init(reservingCapacity capacity: Int = 0) {
        encoded.reserveCapacity(capacity)
    }

    /// Byte arguments, in order.
    public init(_ arguments: [[UInt8]]) {
        self.init(reservingCapacity: arguments.reduce(0) { $0 + $1.count + 16 })
        for argument in arguments { append(argument) }
    }

    /// UTF-8 arguments, in order.
    public init(_ arguments: [String]) {
        self.init(reservingCapacity: arguments.reduce(0) { $0 + $1.utf8.count + 16 })
        for argument in arguments { append(argument) }
    }

    /// Appends one argument of these bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append(raw: $0) }
    }

    /// Appends one argument: the string's UTF-8.
    public mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append(raw: UnsafeRawBufferPointer($0)) }
    }

    /// Appends one argument: `prefix`, `middle` and `suffix` joined (a key named
    /// around a topic, with no string built for it).
    public mutating func append(_ prefix: StaticString, _ middle: String, _ suffix: StaticString) {
        var middle = middle
        middle.withUTF8 { middle in
            appendLength(prefix.utf8CodeUnitCount + middle.count + suffix.utf8CodeUnitCount)
            prefix.withUTF8Buffer { encoded.append(contentsOf: $0) }
            encoded.append(contentsOf: middle)
            suffix.withUTF8Buffer { encoded.append(contentsOf: $0) }
            encoded.append(contentsOf: [13, 10])
        }
        count += 1
    }

    /// Appends one argument: the number in decimal.
    public mutating func append(_ number: Int) {
        withDecimal(number) { append(raw: $0) }
    }

    /// Appends every argument of `other`, in order.
    public mutating func append(contentsOf other: RedisArguments) {
        encoded.append(contentsOf: other.encoded)
        count += other.count
    }

    private mutating func append(raw bytes: UnsafeRawBufferPointer) {
        appendLength(bytes.count)
        encoded.append(contentsOf: bytes)
        encoded.append(contentsOf: [13, 10])
        count += 1
    }

    /// A bulk string's length line, `$<count>\r\n`.
    private mutating func appendLength(_ count: Int) {
        encoded.append(UInt8(ascii: "$"))
        withDecimal(count) { encoded.append(contentsOf: $0) }
        encoded.append(contentsOf: [13, 10])
    }

    /// The array header `*<count>\r\n` and the arguments, appended to `buffer`.
    func write(into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "*"))
        withDecimal(count) { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: [13, 10])
        buffer.append(contentsOf: encoded)
    }

    /// The bytes the command takes on the wire: header and arguments.
    public var byteCount: Int { encoded.count + 3 + decimalLength(count) }
}

/// Calls `body` with the ASCII decimal digits of `number` (a leading `-` when
/// negative), from a stack buffer.
private func withDecimal<R>(_ number: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
        var magnitude = number.magnitude
        var start = 20
        repeat {
            start -= 1
            digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if number < 0 {
            start -= 1
            digits[start] = UInt8(ascii: "-")
        }
        return body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: digits[start..<20])))
    }
}

private func decimalLength(_ number: Int) -> Int {
    var magnitude = number.magnitude, length = number < 0 ? 2 : 1
    while magnitude >= 10 {
        magnitude /= 10
        length += 1
    }
    return length
}
