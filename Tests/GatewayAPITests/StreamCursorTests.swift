import GatewayAPI
import Testing

struct StreamCursorTests {
    /// A cursor is decimal ids joined by `.`, and reads back as written.
    @Test func formatAndParseRoundTrip() {
        let cursor = StreamCursor(positions: [41, 0, 7])
        #expect(cursor.text == "41.0.7")
        #expect(cursor.idLine == Array("id: 41.0.7\n".utf8))
        #expect(StreamCursor.parse("41.0.7", topicCount: 3) == cursor)
        #expect(StreamCursor.parse("18446744073709551615", topicCount: 1)?.positions == [UInt64.max])
    }

    /// A cursor that does not parse, or with another number of positions, is absent.
    @Test func malformedOrWrongCountIsAbsent() {
        for text in [nil, "", "41.0", "41.0.7.1", "41..7", ".0.7", "41.0.", "41.-1.7", "41. 0.7", "4a.0.7",
                     "41.0.18446744073709551616", "41.0.٣", "+41.0.7"] as [String?] {
            #expect(StreamCursor.parse(text, topicCount: 3) == nil, "\(String(describing: text))")
        }
        #expect(StreamCursor.parse("7", topicCount: 0) == nil)
    }
}
