import Testing
@testable import JWT

struct TopicPatternTests {
    private func pattern(_ text: String) throws -> TopicPattern { try #require(TopicPattern(text)) }

    /// `chat/*` grants topics under `chat/` at any depth, and not `chat` itself nor `chatroom/x`.
    @Test func prefixBoundaries() throws {
        let chat = try pattern("chat/*")
        #expect(chat == .prefix("chat"))
        #expect(chat.matches("chat/a"))
        #expect(chat.matches("chat/a/b"))
        #expect(!chat.matches("chat"))
        #expect(!chat.matches("chat/"))
        #expect(!chat.matches("chatroom/x"))
        #expect(!chat.matches("xchat/a"))
        #expect(!chat.matches("Chat/a"))
        #expect(try pattern("a/b/*").matches("a/b/c/d"))
        #expect(!(try pattern("a/b/*").matches("a/bc/d")))
    }

    /// An exact pattern grants that name only, case-sensitively.
    @Test func exact() throws {
        let room = try pattern("chat/room-1")
        #expect(room.matches("chat/room-1"))
        #expect(!room.matches("chat/room-10"))
        #expect(!room.matches("chat/room"))
        #expect(!room.matches("Chat/room-1"))
        #expect(!room.matches("chat/room-1/x"))
    }

    /// `*` grants every topic.
    @Test func any() throws {
        #expect(try pattern("*") == .any)
        #expect(try pattern("*").matches("a"))
        #expect(try pattern("*").matches("a/b/c"))
    }

    /// A star anywhere but alone or after a final slash, an empty pattern and `/*` are not patterns.
    @Test func refused() {
        for text in ["", "chat*", "*/x", "a/*/b", "chat/**", "/*", "**", "a/*b", "*a"] {
            #expect(TopicPattern(text) == nil, "\(text)")
        }
        #expect(TopicPattern("chat/")?.matches("chat/") == true)  // exact, though no topic has that name
    }

    /// A request for several topics is granted only when every topic is; the first refused one is named.
    @Test func severalTopics() throws {
        let grants = Grants(subscribe: [try pattern("chat/*"), try pattern("news")], publish: [try pattern("chat/1")])
        #expect(grants.firstRefused(.subscribe, topics: ["chat/1", "news", "chat/2/x"]) == nil)
        #expect(grants.firstRefused(.subscribe, topics: ["chat/1", "sports", "weather"]) == "sports")
        #expect(grants.firstRefused(.publish, topics: ["chat/1"]) == nil)
        #expect(grants.firstRefused(.publish, topics: ["chat/2"]) == "chat/2")
        #expect(!Grants().allows(.subscribe, topic: "a"))
    }
}
