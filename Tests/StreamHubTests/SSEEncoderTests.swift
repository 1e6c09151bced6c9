import Testing
@testable import StreamHub

struct SSEEncoderTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// An event with id and name is framed as id, event, data lines and a blank line.
    @Test func framesIdEventAndData() {
        #expect(text(SSEEncoder.event(id: 7, event: "x", data: "hello")) == "id: 7\nevent: x\ndata: hello\n\n")
        #expect(text(SSEEncoder.event(id: nil, event: nil, data: "a")) == "data: a\n\n")
        #expect(text(SSEEncoder.event(id: UInt64.max, event: nil, data: "a")) == "id: 18446744073709551615\ndata: a\n\n")
        #expect(text(SSEEncoder.event(id: 0, event: nil, data: "a")) == "id: 0\ndata: a\n\n")
        // A name of line breaks only is no name; breaks inside one are removed.
        #expect(text(SSEEncoder.event(id: 3, event: "\r\n", data: "")) == "id: 3\ndata: \n\n")
        #expect(text(SSEEncoder.event(id: nil, event: "a\nb", data: "v")) == "event: ab\ndata: v\n\n")
        #expect(text(SSEEncoder.event(id: nil, event: "", data: "v")) == "data: v\n\n")
    }

    /// LF, CR and CRLF each end a data line: one `data:` line per line.
    @Test func splitsEveryLineBreakKind() {
        #expect(text(SSEEncoder.event(id: 1, event: nil, data: "l1\nl2")) == "id: 1\ndata: l1\ndata: l2\n\n")
        #expect(text(SSEEncoder.event(id: 1, event: nil, data: "a\rb\r\nc\nd")) == "id: 1\ndata: a\ndata: b\ndata: c\ndata: d\n\n")
        #expect(text(SSEEncoder.event(id: 1, event: nil, data: "a\n\r\nb")) == "id: 1\ndata: a\ndata: \ndata: b\n\n")
        #expect(text(SSEEncoder.event(id: 1, event: nil, data: "a\r\rb")) == "id: 1\ndata: a\ndata: \ndata: b\n\n")
    }

    /// Breaks are found a word at a time: each kind (CR, LF, CRLF, and bytes next to them
    /// that are no break, 0x0B, 0x0C, 0x0E, 0x09) at every position of values up to three
    /// words long, the value's end included, over ASCII and over two-byte characters, gives
    /// the lines a byte-by-byte split gives. (A word wrongly taken for one holding a break
    /// only costs time: the bytes are then looked at one by one.)
    @Test func findsBreaksAtEveryPositionOfAWord() {
        func reference(_ value: [UInt8]) -> String {
            var lines: [[UInt8]] = [[]]
            var i = 0
            while i < value.count {
                if value[i] == 0x0D || value[i] == 0x0A {
                    i += value[i] == 0x0D && i + 1 < value.count && value[i + 1] == 0x0A ? 2 : 1
                    lines.append([])
                } else {
                    lines[lines.count - 1].append(value[i])
                    i += 1
                }
            }
            return lines.map { "data: " + String(decoding: $0, as: UTF8.self) + "\n" }.joined() + "\n"
        }
        for filler: [UInt8] in [[UInt8(ascii: "x")], Array("\u{E9}".utf8)] {
            for length in 0...24 {
                for position in 0...length {
                    for inserted: [UInt8] in [[0x0A], [0x0D], [0x0D, 0x0A], [0x0B, 0x0A], [0x0C, 0x0D], [0x0E, 0x09]] {
                        var value = Array(repeating: filler, count: length).flatMap { $0 }
                        value.insert(contentsOf: inserted, at: position * filler.count)
                        let data = String(decoding: value, as: UTF8.self)
                        #expect(text(SSEEncoder.event(id: nil, event: nil, data: data)) == reference(value),
                                "break \(inserted) at \(position) of \(length)")
                    }
                }
            }
        }
    }

    /// An empty value is written `data: ` and a parser reads it back as "".
    @Test func emptyValue() throws {
        let frame = SSEEncoder.event(id: 3, event: nil, data: "")
        #expect(text(frame) == "id: 3\ndata: \n\n")
        #expect(try parse([frame]) == [SSEEvent(id: "3", event: nil, data: "")])
    }

    /// Event names are written when non-empty; CR and LF can't inject a field.
    @Test func eventNames() {
        #expect(text(SSEEncoder.event(id: 1, event: "", data: "v")) == "id: 1\ndata: v\n\n")
        #expect(text(SSEEncoder.event(id: 1, event: "a\nid: 9\r", data: "v")) == "id: 1\nevent: aid: 9\ndata: v\n\n")
        #expect(text(SSEEncoder.event(id: 1, event: "\r\n", data: "v")) == "id: 1\ndata: v\n\n")
    }

    /// Retry, heartbeat and gap have their exact documented bytes.
    @Test func controlFrames() {
        #expect(text(SSEEncoder.retry(milliseconds: 2000)) == "retry: 2000\n\n")
        #expect(text(SSEEncoder.heartbeat) == ": hb\n\n")
        #expect(text(SSEEncoder.gap(firstMissingID: 42)) == "event: gap\ndata: 42\n\n")
    }

    /// Values round-trip through SSEParser: line breaks become LF, all else is kept.
    @Test(arguments: [
        ("plain", "plain"),
        ("", ""),
        ("l1\nl2\nl3", "l1\nl2\nl3"),
        ("a\rb\r\nc", "a\nb\nc"),
        ("trailing\n", "trailing\n"),
        ("\n", "\n"),
        ("\r\n\r\n", "\n\n"),
        ("trailing cr\r", "trailing cr\n"),
        ("\r\r\n\n", "\n\n\n"),
        ("\r", "\n"),
        (" leading space", " leading space"),
        (": not a comment", ": not a comment"),
        ("data: nested", "data: nested"),
        ("héllo wörld — ✓ 日本語 🎉👩‍👩‍👧", "héllo wörld — ✓ 日本語 🎉👩‍👩‍👧"),
        ("e\u{301} \u{2028} \u{0}", "e\u{301} \u{2028} \u{0}"),
    ])
    func roundTrip(value: String, expected: String) throws {
        let frame = SSEEncoder.event(id: 12, event: "ünï", data: value)
        #expect(try parse([frame]) == [SSEEvent(id: "12", event: "ünï", data: expected)])
    }

    /// A round trip survives any chunking, down to one byte at a time.
    @Test func roundTripByteByByte() throws {
        let frames = [
            SSEEncoder.retry(milliseconds: 1500),
            SSEEncoder.event(id: 1, event: nil, data: "🎉\r\nx"),
            SSEEncoder.heartbeat,
            SSEEncoder.event(id: 2, event: "name", data: "a\rb"),
        ]
        var parser = SSEParser()
        var events: [SSEEvent] = []
        for byte in frames.joined() {
            events += try parser.feed([byte])
        }
        #expect(events == [SSEEvent(id: "1", event: nil, data: "🎉\nx"), SSEEvent(id: "2", event: "name", data: "a\nb")])
        #expect(parser.retry == 1500)
        #expect(parser.comments == 1)
    }

    /// A gap event carries no id, so the parser's last event ID is unchanged.
    @Test func gapKeepsLastEventID() throws {
        let events = try parse([SSEEncoder.event(id: 5, event: nil, data: "v"), SSEEncoder.gap(firstMissingID: 3)])
        #expect(events == [SSEEvent(id: "5", event: nil, data: "v"), SSEEvent(id: "5", event: "gap", data: "3")])
    }
}
