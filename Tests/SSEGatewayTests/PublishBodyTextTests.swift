@testable import SSEGateway
import StreamHub
import Testing

/// A publish body becomes the published text only when it is UTF-8: ASCII is told a word
/// at a time (`PublishHandler.text`), anything else validated as a whole. A non-ASCII or
/// invalid byte at any position of bodies up to three words is seen.
struct PublishBodyTextTests {
    @Test func asciiAndUTF8AreKeptInvalidIsRefused() {
        #expect(PublishHandler.text(of: []) == "")
        for length in 1...24 {
            let ascii = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            #expect(PublishHandler.text(of: ascii) == String(decoding: ascii, as: UTF8.self))
            for position in 0..<length {
                var body = ascii
                body[position] = 0x7F  // still ASCII
                #expect(PublishHandler.text(of: body) == String(decoding: body, as: UTF8.self))
                body[position] = 0xFF  // never UTF-8
                #expect(PublishHandler.text(of: body) == nil, "0xFF at \(position) of \(length)")
                body[position] = 0x80  // a lone continuation byte
                #expect(PublishHandler.text(of: body) == nil, "0x80 at \(position) of \(length)")
                var utf8 = Array(ascii[..<position]) + Array("é".utf8) + Array(ascii[position...])
                #expect(PublishHandler.text(of: utf8) == String(decoding: utf8, as: UTF8.self))
                utf8.removeLast(length - position)  // cut after é's first byte…
                utf8.removeLast()
                #expect(PublishHandler.text(of: utf8) == nil, "a truncated é at \(position)")
            }
        }
    }
}

/// The publish reply's body, put together on the stack: every digit count of the id and of
/// the subscriber count, at both ends of each (each power of ten and the number before it),
/// up to the largest of each type; a negative count is written as 0.
struct PublishReplyBodyTests {
    @Test func theReplyIsItsJSONLine() {
        // 0, and each power of ten and the number before it, up to the largest of each type.
        var powers: [UInt64] = []
        for _ in 1...19 { powers.append((powers.last ?? 1) * 10) }
        let ids: [UInt64] = [0, 1] + powers.flatMap { [$0 - 1, $0] } + [UInt64.max]
        let counts: [Int] = [0, 1] + powers.prefix(18).flatMap { [Int($0) - 1, Int($0)] } + [Int.max]
        for id in ids {
            for subscribers in counts {
                let body = PublishHandler.replyBody(PublishResult(id: id, subscribers: subscribers))
                #expect(String(decoding: body, as: UTF8.self) == #"{"id":"\#(id)","subscribers":\#(subscribers)}"# + "\n")
            }
        }
    }

    @Test func aNegativeCountIsZero() {
        let body = PublishHandler.replyBody(PublishResult(id: 7, subscribers: -3))
        #expect(String(decoding: body, as: UTF8.self) == #"{"id":"7","subscribers":0}"# + "\n")
    }
}
