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
            prefix.withUTF8Buffer { prefix in
                suffix.withUTF8Buffer { suffix in
                    appendArgument(UnsafeRawBufferPointer(prefix), UnsafeRawBufferPointer(middle),
                                   UnsafeRawBufferPointer(suffix))
                }
            }
        }
    }

    /// Appends one argument: the number in decimal.
    public mutating func append(_ number: Int) {
        let length = decimalLength(number)
        withUnsafeTemporaryAllocation(byteCount: 20, alignment: 1) { stack in
            writeDecimal(number, length: length, at: stack.baseAddress!)
            append(raw: UnsafeRawBufferPointer(rebasing: stack[..<length]))
        }
    }

    /// Appends every argument of `other`, in order.
    public mutating func append(contentsOf other: RedisArguments) {
        encoded.append(contentsOf: other.encoded)
        count += other.count
    }

    private mutating func append(raw bytes: UnsafeRawBufferPointer) {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        appendArgument(bytes, none, none)
    }

    /// The longest argument (length line and end included) put together on the stack.
    private static let stackBytes = 256

    /// One bulk string of the bytes of `a`, `b` and `c` joined: `$<length>\r\n<bytes>\r\n`.
    /// Put together on the stack and appended in one piece when it fits in `stackBytes`,
    /// as nearly every argument of a publish does; else its length line, then its bytes. (An
    /// `Array.append(contentsOf:)` costs about 100 instructions whatever it appends: a
    /// publish on Redis spent about 5,000 of its 54,000 in some 50 of them, issue 24.)
    private mutating func appendArgument(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer,
                                         _ c: UnsafeRawBufferPointer) {
        let length = a.count + b.count + c.count
        count += 1
        withUnsafeTemporaryAllocation(byteCount: Self.stackBytes, alignment: 1) { stack in
            let base = stack.baseAddress!
            let lineBytes = writeLengthLine(UInt8(ascii: "$"), length, at: base)
            guard lineBytes + length + 2 <= Self.stackBytes else {
                encoded.append(contentsOf: UnsafeRawBufferPointer(start: base, count: lineBytes))
                if !a.isEmpty { encoded.append(contentsOf: a) }
                if !b.isEmpty { encoded.append(contentsOf: b) }
                if !c.isEmpty { encoded.append(contentsOf: c) }
                encoded.append(13)
                encoded.append(10)
                return
            }
            var end = base + lineBytes
            func copy(_ piece: UnsafeRawBufferPointer) {
                guard let bytes = piece.baseAddress else { return }
                end.copyMemory(from: bytes, byteCount: piece.count)
                end += piece.count
            }
            copy(a)
            copy(b)
            copy(c)
            end.storeBytes(of: 13, as: UInt8.self)
            (end + 1).storeBytes(of: 10, as: UInt8.self)
            encoded.append(contentsOf: UnsafeRawBufferPointer(start: base, count: end + 2 - base))
        }
    }

    /// The array header `*<count>\r\n` and the arguments, appended to `buffer`.
    func write(into buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: 24, alignment: 1) { stack in
            let lineBytes = writeLengthLine(UInt8(ascii: "*"), count, at: stack.baseAddress!)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: stack[..<lineBytes]))
        }
        buffer.append(contentsOf: encoded)
    }

    /// The bytes the command takes on the wire: header and arguments.
    public var byteCount: Int { encoded.count + 3 + decimalLength(count) }
}

/// Writes RESP's length line `<marker><count>\r\n` (`$` of a bulk string, `*` of an array)
/// at `start`, which has room for 23 bytes; returns how many it wrote.
private func writeLengthLine(_ marker: UInt8, _ count: Int, at start: UnsafeMutableRawPointer) -> Int {
    let length = decimalLength(count)
    start.storeBytes(of: marker, as: UInt8.self)
    writeDecimal(count, length: length, at: start + 1)
    (start + 1 + length).storeBytes(of: 13, as: UInt8.self)
    (start + 2 + length).storeBytes(of: 10, as: UInt8.self)
    return length + 3
}

/// Writes `number` in ASCII decimal (a leading `-` when negative) at `start`: `length`
/// bytes, which is `decimalLength(number)`, at most 20.
private func writeDecimal(_ number: Int, length: Int, at start: UnsafeMutableRawPointer) {
    var magnitude = number.magnitude
    var index = length
    repeat {
        index -= 1
        (start + index).storeBytes(of: UInt8(ascii: "0") + UInt8(magnitude % 10), as: UInt8.self)
        magnitude /= 10
    } while magnitude > 0
    if number < 0 { start.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self) }
}

/// How many bytes `number` takes in decimal, its `-` included.
private func decimalLength(_ number: Int) -> Int {
    var magnitude = number.magnitude, length = number < 0 ? 2 : 1
    while magnitude >= 10 {
        magnitude /= 10
        length += 1
    }
    return length
}
