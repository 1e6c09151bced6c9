import Testing
@testable import StreamHub

struct SSEParserTests {
    private func events(_ text: String) throws -> [SSEEvent] {
        var parser = SSEParser()
        return try parser.feed(Array(text.utf8))
    }

    /// Multiple data lines join with LF; the single leading space is stripped once.
    @Test func joinsDataLines() throws {
        #expect(try events("data: a\ndata:b\ndata:  c\n\n") == [SSEEvent(id: nil, event: nil, data: "a\nb\n c")])
    }

    /// A field line without a colon is a field with an empty value.
    @Test func fieldWithoutColon() throws {
        #expect(try events("data\n\n") == [SSEEvent(id: nil, event: nil, data: "")])
    }

    /// Comments and unknown fields are ignored; events without data are not dispatched.
    @Test func ignoresCommentsUnknownFieldsAndEmptyEvents() throws {
        var parser = SSEParser()
        let parsed = try parser.feed(Array(": hi\nfoo: bar\n\nevent: x\n\ndata: y\n\n".utf8))
        #expect(parsed == [SSEEvent(id: nil, event: nil, data: "y")])
        #expect(parser.comments == 1)
    }

    /// The id persists across events; an id containing NUL is ignored; `id:` resets it.
    @Test func idRules() throws {
        let parsed = try events("id: 1\ndata: a\n\ndata: b\n\nid: 2\u{0}\ndata: c\n\nid\ndata: d\n\n")
        #expect(parsed.map(\.id) == ["1", "1", "1", ""])
    }

    /// An id with no data still updates the stream's last event ID.
    @Test func idWithoutDataUpdatesLastEventID() throws {
        var parser = SSEParser()
        #expect(try parser.feed(Array("id: 9\n\n".utf8)).isEmpty)
        #expect(parser.lastEventID == "9")
    }

    /// `retry` takes only ASCII digits.
    @Test func retryRules() throws {
        var parser = SSEParser()
        _ = try parser.feed(Array("retry: 300\n\nretry: 3x\n\nretry:\n\nretry: -1\n\n".utf8))
        #expect(parser.retry == 300)
    }

    /// CR, LF and CRLF end lines, even when a CRLF is split between chunks.
    @Test func lineEndingsAcrossChunks() throws {
        var parser = SSEParser()
        var parsed = try parser.feed(Array("data: a\r".utf8))
        parsed += try parser.feed(Array("\ndata: b\r".utf8))
        parsed += try parser.feed(Array("\r".utf8))
        parsed += try parser.feed(Array("data: c\n\n".utf8))
        #expect(parsed == [SSEEvent(id: nil, event: nil, data: "a\nb"), SSEEvent(id: nil, event: nil, data: "c")])
    }

    /// A leading BOM is skipped, also when split; a BOM-like prefix that isn't is kept.
    @Test func byteOrderMark() throws {
        var parser = SSEParser()
        var parsed = try parser.feed([0xEF])
        parsed += try parser.feed([0xBB, 0xBF] + Array("data: x\n\n".utf8))
        #expect(parsed == [SSEEvent(id: nil, event: nil, data: "x")])
        var other = SSEParser()
        let kept = try other.feed([0xEF, 0x41] + Array(":\ndata: y\n\n".utf8))
        #expect(kept == [SSEEvent(id: nil, event: nil, data: "y")])
        #expect(other.comments == 0)  // "\u{EF}A:" was an unknown field line, not a comment.
    }

    /// An incomplete event at the end of input is not dispatched.
    @Test func incompleteEventWaits() throws {
        #expect(try events("data: a\n").isEmpty)
    }

    /// An event larger than the limit is refused instead of buffered without bound.
    @Test func boundedBuffer() throws {
        var parser = SSEParser(maxEventBytes: 16)
        #expect(throws: SSEParserError.eventTooLarge(limit: 16)) {
            _ = try parser.feed(Array("data: 0123456789\ndata: 0123456789\n\n".utf8))
        }
    }
}
