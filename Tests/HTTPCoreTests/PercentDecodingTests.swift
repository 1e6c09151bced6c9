import Testing
@testable import HTTPCore

struct PercentDecodingTests {
    /// Escapes decode in either hex case; other bytes pass through.
    @Test func decodesEscapes() {
        #expect(PercentDecoding.decode("a%20b%2fc%2F") == bytes("a b/c/"))
        #expect(PercentDecoding.decode("caf%C3%A9") == bytes("caf\u{e9}"))
        #expect(PercentDecoding.decode("") == [])
        #expect(PercentDecoding.decode("plain/path") == bytes("plain/path"))
    }

    /// `%2F` decodes to a slash byte (callers decide whether an encoded slash is allowed).
    @Test func encodedSlash() { #expect(PercentDecoding.decode("%2F") == [0x2F]) }

    /// `+` is not a space in decode (only in queries).
    @Test func plusKeptInDecode() { #expect(PercentDecoding.decode("a+b") == bytes("a+b")) }

    /// Malformed escapes are nil: lone `%`, one digit, non-hex digits.
    @Test(arguments: ["%", "%4", "%zz", "a%g0", "%%", "abc%2"])
    func malformedEscape(_ text: String) { #expect(PercentDecoding.decode(text) == nil) }

    /// Decoding works on substrings too.
    @Test func decodesSubstring() {
        let target = "/events/a%2Db?x=1"
        let path = target[..<(target.firstIndex(of: "?") ?? target.endIndex)]
        #expect(PercentDecoding.decode(path) == bytes("/events/a-b"))
    }

    /// Query items come out in order, both sides decoded, `+` as space, missing `=` as empty value.
    @Test func queryItems() throws {
        let items = try #require(PercentDecoding.queryItems("event=new+msg&a=1&&flag&x%3Dy=%26&a=2"))
        #expect(items.map(\.name) == ["event", "a", "flag", "x=y", "a"])
        #expect(items.map(\.value) == ["new msg", "1", "", "&", "2"])
        #expect(PercentDecoding.queryItems("")?.isEmpty == true)
    }

    /// A query with a malformed escape or invalid UTF-8 is nil.
    @Test func malformedQuery() {
        #expect(PercentDecoding.queryItems("%74opic=a%2Fb", decodingNames: false)?.first?.name == "%74opic")
        #expect(PercentDecoding.queryItems("%74opic=a%2Fb", decodingNames: false)?.first?.value == "a/b")
        #expect(PercentDecoding.queryItems("%7=a", decodingNames: false) == nil)
        #expect(PercentDecoding.queryItems("a=%zz") == nil)
        #expect(PercentDecoding.queryItems("a%=1") == nil)
        #expect(PercentDecoding.queryItems("a=%FF") == nil)
        #expect(PercentDecoding.queryItems("%C3=1") == nil)
    }
}
