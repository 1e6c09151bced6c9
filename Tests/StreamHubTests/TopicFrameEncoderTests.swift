import StreamHub
import Testing

struct TopicFrameEncoderTests {
    /// A value is one JSON data line naming its topic and id; a named event adds the `event:` line and field.
    @Test func jsonDataLine() {
        #expect(TopicFrameEncoder.event(topic: "chat/1", id: 41, event: nil, data: "hi")
            == Array("data: {\"topic\":\"chat/1\",\"id\":\"41\",\"data\":\"hi\"}\n\n".utf8))
        #expect(TopicFrameEncoder.event(topic: "a", id: 1, event: "x", data: "")
            == Array("event: x\ndata: {\"topic\":\"a\",\"id\":\"1\",\"event\":\"x\",\"data\":\"\"}\n\n".utf8))
    }

    /// Quotes, backslashes and control characters are escaped; every line break is `\n`; UTF-8 passes through.
    @Test func jsonEscapes() {
        let frame = TopicFrameEncoder.event(topic: "a", id: 2, event: nil, data: "q\"b\\\r\nc\rd\ne\tf\u{1}é")
        #expect(String(decoding: frame, as: UTF8.self)
            == "data: {\"topic\":\"a\",\"id\":\"2\",\"data\":\"q\\\"b\\\\\\nc\\nd\\ne\\tf\\u0001é\"}\n\n")
    }

    /// A gap names the topic and the first id the stream can no longer have, without an `id:` line.
    @Test func gapFrame() {
        #expect(TopicFrameEncoder.gap(topic: "t", firstMissingID: 5)
            == Array("event: gap\ndata: {\"topic\":\"t\",\"id\":\"5\"}\n\n".utf8))
    }

    /// The JSON frame derived from a stored single-topic frame equals the one encoded live.
    @Test func derivedFromStoredFrameIsTheSame() {
        for (event, data) in [(nil, "a\r\nb\rc\n"), ("name", ""), (nil, "x\"y")] as [(String?, String)] {
            let stored = SSEEncoder.event(id: 9, event: event, data: data)
            let fields = TopicFrameEncoder.fields(of: stored)
            #expect(TopicFrameEncoder.event(topic: "t", id: 9, event: fields.event, data: fields.data)
                == TopicFrameEncoder.event(topic: "t", id: 9, event: event, data: data))
        }
    }
}
