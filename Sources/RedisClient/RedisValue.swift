/// A reply from Redis (RESP2), less error replies: those are thrown as
/// `RedisError.server`. Values own their bytes; nothing refers back to a buffer.
public enum RedisValue: Sendable, Equatable {
    case status(String)
    case integer(Int64)
    case bulk([UInt8])
    /// A null bulk string or a null array.
    case null
    case array([RedisValue])

    /// An `.integer`, or a `.bulk` or `.status` holding a decimal integer.
    public var integer: Int64? {
        switch self {
        case .integer(let value): return value
        case .bulk(let bytes): return Self.decimal(bytes)
        case .status(let text): return Self.decimal(Array(text.utf8))
        case .null, .array: return nil
        }
    }

    /// The bytes of a `.bulk`, or the UTF-8 of a `.status`.
    public var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): return bytes
        case .status(let text): return Array(text.utf8)
        case .integer, .null, .array: return nil
        }
    }

    /// A `.status`, or a `.bulk` that is valid UTF-8.
    public var string: String? {
        switch self {
        case .status(let text): return text
        case .bulk(let bytes): return String(validating: bytes, as: UTF8.self)
        case .integer, .null, .array: return nil
        }
    }

    /// The elements of an `.array`.
    public var array: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// `-?[0-9]+` within Int64, as Redis writes integers.
    private static func decimal(_ bytes: [UInt8]) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
        let negative = bytes[0] == UInt8(ascii: "-")
        let digits = negative ? bytes.dropFirst() : bytes[...]
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let digit = Int64(byte - 0x30)
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow1 && !overflow2 else { return nil }
            value = next
        }
        return value
    }
}

/// Why a Redis call failed.
///
/// Promises: `.server` and `.cancelled` are the only errors after which the
/// connection is still usable; after any other the connection is closed (or never
/// opened).
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Connecting failed: refused, timed out, a name that does not resolve, or
    /// AUTH or SELECT refused. The reason says which.
    case unreachable(String)
    /// No reply within the call's timeout (the connection was closed: a FIFO
    /// pipeline cannot skip a reply), or the pipeline was full (nothing was sent,
    /// the connection stays open).
    case timedOut
    /// The connection is closed or was lost.
    case closed
    /// An error reply, e.g. "NOSCRIPT No matching script. Please use EVAL.".
    case server(String)
    /// Bytes from the server that are not RESP; the connection was closed.
    case protocolError(String)
    /// The calling task was cancelled while it waited; the command's reply, if it
    /// comes, is read and dropped (the connection stays open).
    case cancelled

    public var description: String {
        switch self {
        case .unreachable(let reason): return "Redis unreachable: \(reason)"
        case .timedOut: return "Redis did not answer in time"
        case .closed: return "the Redis connection is closed"
        case .server(let message): return "Redis error: \(message)"
        case .protocolError(let reason): return "Redis protocol error: \(reason)"
        case .cancelled: return "the Redis call was cancelled"
        }
    }
}
