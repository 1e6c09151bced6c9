import GatewayAPI
import Testing

struct TopicNameTests {
    private static let x200 = String(repeating: "x", count: 200)
    /// 200 bytes once decoded, with slashes: 66 × "ab/" + "ab".
    private static let segmented200 = String(repeating: "ab/", count: 66) + "ab"

    /// Topics made of the allowed characters are accepted and returned decoded.
    @Test(arguments: [
        ("chat/room-1", "chat/room-1"),
        ("a", "a"),
        ("A.b_c~d-e/0.9", "A.b_c~d-e/0.9"),
        ("...", "..."),
        ("a./.b/..c", "a./.b/..c"),
        ("%41bc", "Abc"),
        ("a/%7e/%2D", "a/~/-"),
        (x200, x200),
        (segmented200, segmented200),
        (String(repeating: "%41", count: 200), String(repeating: "A", count: 200)),
    ])
    func accepted(raw: String, topic: String) {
        #expect(TopicName.parse(rawPath: Substring(raw)) == .success(topic))
    }

    /// Everything outside the rules is a 400 with the matching reason.
    @Test(arguments: [
        ("", TopicError.Problem.empty),
        ("a//b", .emptySegment),
        ("/a", .emptySegment),
        ("a/", .emptySegment),
        ("/", .emptySegment),
        (".", .dotSegment),
        ("..", .dotSegment),
        ("a/../b", .dotSegment),
        ("a/.", .dotSegment),
        ("%2e", .dotSegment),
        ("%2e%2E", .dotSegment),
        ("%2E%2e", .dotSegment),
        (".%2e/a", .dotSegment),
        ("a/%2e%2E/b", .dotSegment),
        ("%2F", .encodedSlash),
        ("a%2Fb", .encodedSlash),
        ("a%2fb", .encodedSlash),
        ("a%", .malformedEscape),
        ("a%2", .malformedEscape),
        ("a%zz", .malformedEscape),
        ("a%g1", .malformedEscape),
        ("a%%41", .malformedEscape),
        ("a b", .disallowedCharacter),
        ("a%20b", .disallowedCharacter),
        ("a+b", .disallowedCharacter),
        ("a?b", .disallowedCharacter),
        ("a%00b", .disallowedCharacter),
        ("%25", .disallowedCharacter),
        ("%2541", .disallowedCharacter),
        ("a\\b", .disallowedCharacter),
        ("café", .disallowedCharacter),
        ("caf%C3%A9", .disallowedCharacter),
        ("チャット", .disallowedCharacter),
        (x200 + "x", .tooLong),
        (segmented200 + "c", .tooLong),
        (String(repeating: "%41", count: 201), .tooLong),
    ])
    func refused(raw: String, problem: TopicError.Problem) {
        #expect(TopicName.parse(rawPath: Substring(raw)) == .failure(TopicError(subject: .topic, problem: problem)))
    }

    /// Topic names are case-sensitive: `Chat` and `chat` are different topics.
    @Test func caseSensitive() {
        #expect(TopicName.parse(rawPath: "Chat") == .success("Chat"))
        #expect(TopicName.parse(rawPath: "Chat") != TopicName.parse(rawPath: "chat"))
    }

    /// The remainder may be a slice of the request path; only the slice is read.
    @Test func parsesASubstringOfThePath() {
        let path = "/events/chat/room-1"
        let remainder = path.dropFirst("/events/".count)
        #expect(TopicName.parse(rawPath: remainder) == .success("chat/room-1"))
    }

    /// A name without escapes (checked in one pass) gets the same answer as the same name
    /// with an escape in it (decoded segment by segment), accepted or refused.
    @Test(arguments: [
        "publish-only/42", "a", "a/b/c", "...", "a./.b/..c", ".a/b.", "x/" + x200, "a//b", "a/", "/a",
        ".", "..", "a/./b", "a/../b", "a/..", "a b", "a?b", "a/b%", x200 + "x", segmented200,
    ])
    func plainAndEscapedAgree(raw: String) {
        // `%61` is `a`: prefixing it to the name forces the escape path without changing
        // which rule the rest breaks (an empty first segment becomes "a", so prefix "a" to the plain one).
        let plain = TopicName.parse(rawPath: Substring("a" + raw))
        let escaped = TopicName.parse(rawPath: Substring("%61" + raw))
        #expect(plain == escaped)
    }

    /// Every reason is one short line naming what was wrong.
    @Test func reasonsAreOneLine() {
        let problems: [TopicError.Problem] = [
            .empty, .emptySegment, .dotSegment, .encodedSlash, .malformedEscape, .disallowedCharacter, .tooLong,
        ]
        for problem in problems {
            for subject in [TopicError.Subject.topic, .eventName] {
                let reason = TopicError(subject: subject, problem: problem).reason
                #expect(!reason.isEmpty && !reason.contains("\n") && !reason.contains("\r"))
                #expect(reason.hasPrefix(subject == .topic ? "topic " : "event name "))
            }
        }
        #expect(TopicError(subject: .topic, problem: .encodedSlash).reason == "topic contains an encoded slash (%2F)")
        #expect(TopicError(subject: .topic, problem: .tooLong).reason == "topic is longer than 200 bytes")
    }
}

struct EventNameTests {
    /// Event names made of a topic segment's characters are accepted (escapes decoded).
    @Test(arguments: [
        ("update", "update"), ("user.joined", "user.joined"), ("a-b_c~d", "a-b_c~d"), ("%41", "A"), ("Gap", "Gap"),
        (String(repeating: "e", count: 200), String(repeating: "e", count: 200)),
    ])
    func accepted(raw: String, name: String) {
        #expect(EventName.validate(raw) == .success(name))
    }

    /// Names that are empty, contain a slash or other characters, are dot segments or too long are refused.
    @Test(arguments: [
        ("", TopicError.Problem.empty),
        ("a/b", .disallowedCharacter),
        ("a%2Fb", .encodedSlash),
        (".", .dotSegment),
        ("%2e%2e", .dotSegment),
        ("a b", .disallowedCharacter),
        ("a\nb", .disallowedCharacter),
        ("a%0Ab", .disallowedCharacter),
        ("a%0Db", .disallowedCharacter),
        ("é", .disallowedCharacter),
        ("a%", .malformedEscape),
        (String(repeating: "e", count: 201), .tooLong),
    ])
    func refused(raw: String, problem: TopicError.Problem) {
        #expect(EventName.validate(raw) == .failure(TopicError(subject: .eventName, problem: problem)))
    }

    /// An event-name refusal says "event name", not "topic", in its reason.
    @Test func reasonNamesTheEvent() throws {
        guard case .failure(let error) = EventName.validate("a b") else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.reason == "event name may contain only A-Z a-z 0-9 . _ ~ -")
    }
}
