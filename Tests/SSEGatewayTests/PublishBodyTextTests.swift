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

/// The publish reply's body, written byte by byte into a buffer of its exact size: every
/// digit count of the id and the subscriber count, at both ends of their ranges.
struct PublishReplyBodyTests {
    @Test(arguments: [UInt64(0), 9, 10, 99, 100, 12_345, 281_474_976_710_655, UInt64.max])
    func theReplyIsItsJSONLine(id: UInt64) {
        for subscribers in [0, 1, 10, 999, 1_000_000] {
            let body = PublishHandler.replyBody(PublishResult(id: id, subscribers: subscribers))
            #expect(String(decoding: body, as: UTF8.self) == #"{"id":"\#(id)","subscribers":\#(subscribers)}"# + "\n")
        }
    }

    @Test func aNegativeCountIsZero() {
        let body = PublishHandler.replyBody(PublishResult(id: 7, subscribers: -3))
        #expect(String(decoding: body, as: UTF8.self) == #"{"id":"7","subscribers":0}"# + "\n")
    }
}
