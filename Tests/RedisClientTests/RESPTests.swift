import Testing
@testable import RedisClient

/// hiredis's parser and formatter as the client uses them.
struct RESPTests {
    private func replies(_ chunks: [String]) throws -> [Reply] {
        let reader = ReplyReader(maxBuffered: 1 << 20)
        var all: [Reply] = []
        for chunk in chunks {
            try reader.feed(Array(chunk.utf8))
            while let reply = try reader.next() { all.append(reply) }
        }
        return all
    }

    /// Every RESP2 type converts; replies split anywhere come out whole and in order.
    @Test func parsesEveryTypeAcrossSplits() throws {
        let stream = "+OK\r\n-ERR bad\r\n:-42\r\n$3\r\na\0b\r\n$-1\r\n*2\r\n$1\r\nx\r\n*1\r\n:1\r\n*-1\r\n$0\r\n\r\n"
        let expected: [Reply] = [.value(.status("OK")), .error("ERR bad"), .value(.integer(-42)), .value(.bulk([97, 0, 98])),
                                 .value(.null), .value(.array([.bulk([120]), .array([.integer(1)])])), .value(.null),
                                 .value(.bulk([]))]
        #expect(try replies([stream]) == expected)
        let bytes = Array(stream)
        for cut in 1..<bytes.count {
            #expect(try replies([String(bytes[..<cut]), String(bytes[cut...])]) == expected, "cut at \(cut)")
        }
    }

    /// An error inside an array fails the whole reply with its message.
    @Test func nestedErrorFailsTheReply() throws {
        #expect(try replies(["*2\r\n:1\r\n-ERR inner\r\n"]) == [.error("ERR inner")])
    }

    /// Bytes that are not RESP are a protocol error.
    @Test func garbageIsAProtocolError() {
        #expect(throws: RedisError.protocolError("Protocol error, got \"?\" as reply type byte")) { try replies(["?what\r\n"]) }
    }

    /// A reply still being assembled past the bound is a protocol error.
    @Test func oversizedPartialReplyIsRefused() throws {
        let reader = ReplyReader(maxBuffered: 100)
        try reader.feed(Array(("$1000\r\n" + String(repeating: "x", count: 200)).utf8))
        #expect(throws: RedisError.protocolError("a reply larger than 100 bytes")) { try reader.next() }
    }

    /// Commands are encoded as RESP arrays of bulk strings, binary-safe.
    @Test func encodesBinarySafeCommands() {
        func written(_ command: EncodedCommand) -> [UInt8] {
            var buffer: [UInt8] = []
            command.write(into: &buffer)
            #expect(buffer.count == command.byteCount)
            return buffer
        }
        let set = RedisArguments([Array("SET".utf8), [0, 13, 10], []])
        #expect(written(EncodedCommand(arguments: set, afterAsking: false))
                == Array("*3\r\n$3\r\nSET\r\n$3\r\n".utf8) + [0, 13, 10] + Array("\r\n$0\r\n\r\n".utf8))
        #expect(written(EncodedCommand(arguments: RedisArguments(["GET", "ké"]), afterAsking: true))
                == Array("*1\r\n$6\r\nASKING\r\n*2\r\n$3\r\nGET\r\n$3\r\nké\r\n".utf8))
    }

    /// Numbers are decimal arguments; runs built apart join into one command, whose
    /// header counts every argument (two digits past nine), lengths of any size.
    @Test func joinsArgumentRunsAndNumbers() {
        var constants = RedisArguments()
        for number in [0, 7, -12, Int.max, Int.min] { constants.append(number) }
        var command = RedisArguments(["EVALSHA"])
        command.append(String(repeating: "x", count: 1_234))
        command.append(contentsOf: constants)
        command.append(contentsOf: constants)
        #expect(command.count == 12)
        var buffer: [UInt8] = []
        command.write(into: &buffer)
        let numbers = "$1\r\n0\r\n$1\r\n7\r\n$3\r\n-12\r\n$19\r\n9223372036854775807\r\n$20\r\n-9223372036854775808\r\n"
        #expect(String(decoding: buffer, as: UTF8.self)
                == "*12\r\n$7\r\nEVALSHA\r\n$1234\r\n" + String(repeating: "x", count: 1_234) + "\r\n" + numbers + numbers)
        #expect(buffer.count == command.byteCount)
    }

    /// An argument joined from a prefix, a name and a suffix is one bulk string, the same
    /// bytes at every length: below, at and past the size put together on the stack (256
    /// bytes: a plain argument of 248 bytes fills it, the key of a name of 237), with an
    /// empty prefix or suffix, and a non-ASCII name.
    @Test func joinedArgumentsAtEveryLength() {
        for length in [0, 1, 9, 10, 99, 100, 230] + Array(235...258) + [1_000, 70_000] {
            let name = String(repeating: "é", count: length / 2) + String(repeating: "n", count: length % 2)
            var joined = RedisArguments()
            joined.append("{t:", name, "}:events")
            joined.append("", name, "")
            joined.append(name)
            joined.append(Array(name.utf8))
            var buffer: [UInt8] = []
            joined.write(into: &buffer)
            let key = "{t:" + name + "}:events"
            let one = "$\(name.utf8.count)\r\n\(name)\r\n"
            #expect(String(decoding: buffer, as: UTF8.self)
                    == "*4\r\n$\(key.utf8.count)\r\n\(key)\r\n" + one + one + one, "length \(length)")
            #expect(buffer.count == joined.byteCount)
        }
    }

    /// Integers are read from integer, bulk and status values; other accessors pick their case.
    @Test func valueAccessors() {
        #expect(RedisValue.integer(7).integer == 7)
        #expect(RedisValue.bulk(Array("-12".utf8)).integer == -12)
        #expect(RedisValue.status("9223372036854775807").integer == Int64.max)
        #expect(RedisValue.bulk(Array("9223372036854775808".utf8)).integer == nil)
        #expect(RedisValue.bulk(Array("1x".utf8)).integer == nil)
        #expect(RedisValue.bulk([]).integer == nil)
        #expect(RedisValue.status("OK").string == "OK")
        #expect(RedisValue.bulk([0xff]).string == nil)
        #expect(RedisValue.status("OK").bytes == Array("OK".utf8))
        #expect(RedisValue.null.bytes == nil)
        #expect(RedisValue.array([.null]).array == [.null])
        #expect(RedisValue.integer(1).array == nil)
    }
}
