import Testing
@testable import JWT

struct JSONReaderTests {
    private func parse(_ text: String, limits: JSONLimits = JSONLimits()) -> JSONValue? {
        try? JSONReader.parse(Array(text.utf8), limits: limits)
    }

    /// Every kind of value reads as itself, with members in document order.
    @Test func values() throws {
        let value = parse(#" { "a" : [1, -2.5e3, true, false, null, "x"], "b": {} } "#)
        let expected = JSONValue.object(JSONObject(members: [
            .init(key: "a", value: .array([.number(1), .number(-2500), .bool(true), .bool(false), .null, .string("x")])),
            .init(key: "b", value: .object(JSONObject(members: []))),
        ]))
        #expect(value == expected)
    }

    /// A key given twice is refused, at the top level and nested, also when spelled with an escape.
    @Test func duplicateKeys() {
        #expect(parse(#"{"exp":1,"exp":2}"#) == nil)
        #expect(parse(#"{"sse":{"subscribe":[],"subscribe":["*"]}}"#) == nil)
        #expect(parse(#"{"exp":1,"\u0065xp":2}"#) == nil)
        #expect(parse(#"{"a":{"x":1},"b":{"x":1}}"#) != nil)
    }

    /// What RFC 8259 does not allow is refused: trailing commas, comments, leading zeros, bare words, single quotes.
    @Test func grammar() {
        for text in [#"{"a":1,}"#, "[1,]", "{\"a\":1}//", "01", "-01", "1.", ".5", "1e", "+1", "NaN", "Infinity",
                     "'a'", "{a:1}", "[1 2]", "{\"a\" 1}", "", " ", "tru", "nul", "{\"a\":1}}", "[", "\"abc"] {
            #expect(parse(text) == nil, "\(text.debugDescription)")
        }
        for text in ["0", "-0", "1.5", "1e5", "1E+5", "1e-5", "[]", "{}", "\"\"", " \t\r\n[ ] "] {
            #expect(parse(text) != nil, "\(text.debugDescription)")
        }
    }

    /// Raw control characters in strings and invalid UTF-8 are refused; escapes decode.
    @Test func strings() {
        #expect(parse("\"a\u{1}b\"") == nil)
        #expect(parse("\"a\nb\"") == nil)
        #expect((try? JSONReader.parse([0x22, 0xC3, 0x28, 0x22])) == nil)
        #expect((try? JSONReader.parse([0x22, 0xED, 0xA0, 0x80, 0x22])) == nil)  // an encoded surrogate
        #expect(parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(parse(#""\u00e9\u20AC""#) == .string("é€"))
        #expect(parse("\"é\"") == .string("é"))
        #expect(parse(#""\x""#) == nil)
        #expect(parse(#""\u12""#) == nil)
    }

    /// A surrogate pair joins; a lone or reversed surrogate is refused.
    @Test func surrogates() {
        #expect(parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(parse(#""\ud83d""#) == nil)
        #expect(parse(#""\ud83dx""#) == nil)
        #expect(parse(#""\ude00""#) == nil)
        #expect(parse(#""\ud83d\u0041""#) == nil)
    }

    /// Numbers beyond a Double's range are refused rather than read as infinity.
    @Test func numberRange() {
        #expect(parse("1e400") == nil)
        #expect(parse("-1e400") == nil)
        #expect(parse("1700000000") == .number(1_700_000_000))
        #expect(parse("1e-400") == .number(0))
    }

    /// Nesting deeper than the limit, and text longer than the limit, are refused.
    @Test func limits() {
        var limits = JSONLimits()
        limits.maximumDepth = 3
        #expect(parse("[[[1]]]", limits: limits) != nil)
        #expect(parse("[[[[1]]]]", limits: limits) == nil)
        #expect(parse(#"{"a":{"b":{"c":{}}}}"#, limits: limits) == nil)
        #expect(parse(String(repeating: "[", count: 100_000)) == nil)
        limits = JSONLimits()
        limits.maximumBytes = 10
        #expect(parse("[1,2,3,4]", limits: limits) != nil)
        #expect(parse("[1,2,3,4,5]", limits: limits) == nil)
    }

    /// `parseObject` wants an object at the top.
    @Test func objectAtTop() {
        #expect(throws: JSONError.self) { try JSONReader.parseObject(Array("[]".utf8)) }
        #expect(throws: JSONError.self) { try JSONReader.parseObject(Array("\"a\"".utf8)) }
        #expect(throws: Never.self) { try JSONReader.parseObject(Array("{}".utf8)) }
    }
}
