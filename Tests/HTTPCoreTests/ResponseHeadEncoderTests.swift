import Glibc
import Locking
import Testing
@testable import HTTPCore

/// Response heads written straight to bytes: cached status lines, server-owned fields
/// from templates, and the `Date` field cached per second.
struct ResponseHeadEncoderTests {
    private func text(_ encoder: HTTPResponseHeadEncoder) -> String {
        String(decoding: encoder.bytes, as: UTF8.self)
    }

    /// Every named status's cached line is the line the generic writer makes.
    @Test(arguments: [HTTPStatus.continue, .ok, .noContent, .notModified, .badRequest, .unauthorized, .notFound,
                      .methodNotAllowed, .requestTimeout, .lengthRequired, .contentTooLarge, .uriTooLong,
                      .expectationFailed, .headersTooLarge, .internalServerError, .notImplemented,
                      .serviceUnavailable, .versionNotSupported])
    func cachedStatusLinesMatch(_ status: HTTPStatus) throws {
        var generic: [UInt8] = []
        HTTPStatusLines.append(status, version: .http11, to: &generic)
        #expect(try #require(HTTPStatusLines.line(for: status)) == generic)
        #expect(String(decoding: generic, as: UTF8.self) == "HTTP/1.1 \(status.code) \(status.reason)\r\n")
    }

    /// A status with its own reason phrase (or an unnamed code) is written as given.
    /// The forgery check finds the first CR or LF of a field, a word at a time: every byte at
    /// every position of fields up to two words and a byte long, after other low bytes (TAB, NUL, 0x0B,
    /// 0x0C) and high ones, gives the byte-by-byte answer.
    @Test func theForgeryCheckFindsEveryLineBreak() {
        var wrong: [String] = []
        for length in 1...17 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var text = (0..<length).map { [UInt8(0x41), 0x09, 0xC3, 0x00, 0x7A, 0x0B, 0x0C][$0 % 7] }
                    text[position] = byte
                    let expected = text.firstIndex { $0 == 0x0D || $0 == 0x0A }
                    let found = text.withUnsafeBytes { HTTPResponseHeadEncoder.firstLineBreak(in: $0) }
                    if found != expected { wrong.append("\(byte) at \(position) of \(length): \(String(describing: found))") }
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    @Test func customReasonIsNotReplacedByTheCache() {
        #expect(HTTPStatusLines.line(for: HTTPStatus(code: 200, reason: "Fine")) == nil)
        #expect(text(HTTPResponseHeadEncoder(status: HTTPStatus(code: 200, reason: "Fine"))) == "HTTP/1.1 200 Fine\r\n")
        #expect(text(HTTPResponseHeadEncoder(status: HTTPStatus(code: 299, reason: "Odd"))) == "HTTP/1.1 299 Odd\r\n")
        #expect(text(HTTPResponseHeadEncoder(status: .ok, version: .http10)) == "HTTP/1.0 200 OK\r\n")
    }

    /// `Content-Length` digits are written in place for any length.
    @Test(arguments: [0, 7, 10, 128, 65_536, 1_234_567_890, Int.max])
    func contentLengthDigits(_ n: Int) {
        var encoder = HTTPResponseHeadEncoder(status: .ok)
        encoder.appendContentLength(n)
        #expect(text(encoder) == "HTTP/1.1 200 OK\r\nContent-Length: \(n)\r\n")
    }

    /// The handler's fields come in order, minus those the server sets (any case), then
    /// the server's own, then the empty line and the body.
    @Test func serverFieldsReplaceTheHandlers() {
        let headers: HTTPHeaders = ["X-A": "1", "date": "bogus", "CONTENT-LENGTH": "99", "Connection": "close",
                                    "Transfer-Encoding": "gzip", "X-B": "2"]
        var encoder = HTTPResponseHeadEncoder(status: .ok)
        encoder.appendFields(of: headers, skipping: [.date, .contentLength, .connection])
        encoder.appendFieldLine(HTTPDateCache { 784_111_777 }.fieldLine)
        encoder.appendContentLength(2)
        encoder.appendFieldLine(HTTPServerFields.keepAliveLine)
        encoder.endHead()
        encoder.appendBody(bytes("hi"))
        #expect(text(encoder) == "HTTP/1.1 200 OK\r\nX-A: 1\r\nTransfer-Encoding: gzip\r\nX-B: 2\r\n"
            + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi")
    }

    /// The templates are the lines they name.
    @Test func templates() {
        #expect(HTTPServerFields.closeLine == bytes("Connection: close\r\n"))
        #expect(HTTPServerFields.keepAliveLine == bytes("Connection: keep-alive\r\n"))
        #expect(HTTPServerFields.chunkedLine == bytes("Transfer-Encoding: chunked\r\n"))
    }
}

/// The `Date` cache: IMF-fixdate, formatted once per second of its clock.
struct HTTPDateCacheTests {
    /// A clock tests move by hand.
    private final class ManualClock: Sendable {
        private let seconds: Locked<Int>
        init(_ start: Int) { seconds = Locked(start) }
        func now() -> Int { seconds.withLock { $0 } }
        func advance(by n: Int = 1) { seconds.withLock { $0 += n } }
    }

    /// The value and the field line are IMF-fixdate for the clock's second.
    @Test func format() {
        let cache = HTTPDateCache { 784_111_777 }
        #expect(cache.value == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(cache.fieldLine == bytes("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"))
    }

    /// Within one second the cache hands out the same text; the next second refreshes both forms.
    @Test func refreshesWhenTheSecondChanges() {
        let clock = ManualClock(1_764_763_199)  // 2025-12-03 11:59:59 UTC
        let cache = HTTPDateCache { clock.now() }
        #expect(cache.value == "Wed, 03 Dec 2025 11:59:59 GMT")
        #expect(cache.fieldLine == bytes("Date: Wed, 03 Dec 2025 11:59:59 GMT\r\n"))
        clock.advance()
        #expect(cache.fieldLine == bytes("Date: Wed, 03 Dec 2025 12:00:00 GMT\r\n"))
        #expect(cache.value == "Wed, 03 Dec 2025 12:00:00 GMT")
        clock.advance(by: 86_400 * 365)
        #expect(cache.value == HTTPDate.format(clock.now()))
        #expect(HTTPDate.parse(cache.value) == clock.now())
    }

    /// The shared cache follows the wall clock.
    @Test func sharedCacheIsNow() throws {
        let parsed = try #require(HTTPDate.parse(HTTPDate.now()))
        let now = Int(Glibc.time(nil))
        #expect(abs(parsed - now) <= 1)
        let line = HTTPDateCache.shared.fieldLine
        #expect(line.starts(with: bytes("Date: ")) && line.suffix(2) == [0x0D, 0x0A] && line.count == 37)
    }

    /// Many threads reading across second changes all see well-formed lines.
    @Test func concurrentReaders() async {
        let clock = ManualClock(0)
        let cache = HTTPDateCache { clock.now() }
        await withTaskGroup(of: Bool.self) { group in
            for reader in 0..<4 {
                group.addTask {
                    var ok = true
                    for i in 0..<2_000 {
                        if reader == 0 && i % 100 == 0 { clock.advance() }
                        let line = cache.fieldLine
                        ok = ok && line.count == 37 && HTTPDate.parse(String(decoding: line[6..<35], as: UTF8.self)) != nil
                    }
                    return ok
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
