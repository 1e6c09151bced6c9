import CHiredis

/// One reply read from the stream: a value, or an error reply's message.
enum Reply: Sendable, Equatable {
    case value(RedisValue)
    case error(String)
}

/// The incremental RESP2 parser of one connection: hiredis's `redisReader`
/// (bytes in, whole replies out), each reply converted to a `Reply` and its C
/// object freed at once.
///
/// Promises: owned by one task (the connection's reader); holds at most
/// `maxBuffered` bytes of a reply still being assembled (a larger one fails with
/// `.protocolError`); after an error it accepts nothing more. Frees its reader
/// on deinit.
final class ReplyReader {
    private let reader: UnsafeMutablePointer<redisReader>
    private let maxBuffered: Int

    init(maxBuffered: Int) {
        // A few hundred bytes from malloc; without them no reply can be read at all.
        guard let reader = redisReaderCreate() else { fatalError("cannot allocate a hiredis reader") }
        self.reader = reader
        self.maxBuffered = maxBuffered
    }

    deinit {
        redisReaderFree(reader)
    }

    /// Appends bytes read from the socket; call `next` until it returns nil.
    func feed(_ bytes: [UInt8]) throws(RedisError) {
        let status = bytes.withUnsafeBytes { raw in
            redisReaderFeed(reader, raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count)
        }
        guard status == REDIS_OK else { throw .protocolError(String(cString: chiredis_reader_error(reader))) }
    }

    /// The next complete reply, or nil when the bytes fed so far end inside one.
    /// - Throws: `.protocolError` on bytes that are not RESP2, or once a partial
    ///   reply holds more than `maxBuffered` bytes.
    func next() throws(RedisError) -> Reply? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
            throw .protocolError(String(cString: chiredis_reader_error(reader)))
        }
        guard let raw else {
            if chiredis_reader_buffered(reader) > maxBuffered {
                throw .protocolError("a reply larger than \(maxBuffered) bytes")
            }
            return nil
        }
        defer { freeReplyObject(raw) }
        let reply = UnsafePointer(raw.assumingMemoryBound(to: redisReply.self))
        do throws(NestedError) {
            let value = try Self.value(reply)
            return .value(value)
        } catch {
            return .error(error.message)
        }
    }

    /// An error reply inside an array (from EXEC or EVAL): the whole reply fails with it.
    private struct NestedError: Error {
        let message: String
    }

    private static func value(_ reply: UnsafePointer<redisReply>) throws(NestedError) -> RedisValue {
        switch reply.pointee.type {
        case REDIS_REPLY_STRING: return .bulk(bytes(reply))
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(reply), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int64(reply.pointee.integer))
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_ARRAY:
            var elements: [RedisValue] = []
            elements.reserveCapacity(reply.pointee.elements)
            for index in 0..<reply.pointee.elements {
                elements.append(try value(chiredis_reply_element(reply, index)))
            }
            return .array(elements)
        case REDIS_REPLY_ERROR: throw NestedError(message: String(decoding: bytes(reply), as: UTF8.self))
        default: throw NestedError(message: "reply of unknown type \(reply.pointee.type)")
        }
    }

    private static func bytes(_ reply: UnsafePointer<redisReply>) -> [UInt8] {
        guard let start = reply.pointee.str, reply.pointee.len > 0 else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: start, count: reply.pointee.len))
    }
}
