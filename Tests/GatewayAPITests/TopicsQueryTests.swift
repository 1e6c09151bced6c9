import GatewayAPI
import Testing

struct TopicsQueryTests {
    /// Topics come in parameter order, decoded once; `%2F` is a slash; other parameters are ignored.
    @Test func topicsInOrderDecodedOnce() {
        #expect(TopicsQuery.topics(in: "topic=b&x=1&topic=chat%2F1&topic=%41") == .success(["b", "chat/1", "A"]))
        #expect(TopicsQuery.topics(in: "topic=a/b") == .success(["a/b"]))
    }

    /// A parameter name is matched as written (README, "Choices"), as `?event=` is on the publish
    /// side: `%74opic` is not `topic` (it was decoded into one); its escapes must still be well formed.
    @Test func parameterNamesAreMatchedAsWritten() {
        #expect(TopicsQuery.topics(in: "%74opic=a") == .failure(.noTopic))
        #expect(TopicsQuery.topics(in: "%74opic=a&topic=b") == .success(["b"]))
        #expect(TopicsQuery.topics(in: "%7=a&topic=b") == .failure(.malformed))
    }

    /// No topic, more than 32, a duplicate (also after decoding): 400 reasons.
    @Test func countAndDuplicates() {
        #expect(TopicsQuery.topics(in: nil) == .failure(.noTopic))
        #expect(TopicsQuery.topics(in: "") == .failure(.noTopic))
        #expect(TopicsQuery.topics(in: "x=a") == .failure(.noTopic))
        let thirtyTwo = (1...32).map { "topic=t\($0)" }.joined(separator: "&")
        #expect(TopicsQuery.topics(in: thirtyTwo).map(\.count) == .success(32))
        #expect(TopicsQuery.topics(in: thirtyTwo + "&topic=t33") == .failure(.tooManyTopics))
        #expect(TopicsQuery.topics(in: "topic=a&topic=%61") == .failure(.duplicateTopic))
    }

    /// Each value follows the topic rules once decoded; `%2541` stays `%41` and is refused.
    @Test func topicRules() {
        func bad(_ problem: TopicError.Problem) -> Result<[String], TopicsQuery.Problem> {
            .failure(.badTopic(TopicError(subject: .topic, problem: problem)))
        }
        #expect(TopicsQuery.topics(in: "topic=") == bad(.empty))
        #expect(TopicsQuery.topics(in: "topic=a%2F%2Fb") == bad(.emptySegment))
        #expect(TopicsQuery.topics(in: "topic=%2Fa") == bad(.emptySegment))
        #expect(TopicsQuery.topics(in: "topic=a/..") == bad(.dotSegment))
        #expect(TopicsQuery.topics(in: "topic=%2541") == bad(.disallowedCharacter))
        #expect(TopicsQuery.topics(in: "topic=a+b") == bad(.disallowedCharacter))
        #expect(TopicsQuery.topics(in: "topic=" + String(repeating: "a", count: 201)) == bad(.tooLong))
        #expect(TopicsQuery.topics(in: "topic=a&topic=%zz") == .failure(.malformed))
        #expect(!TopicsQuery.Problem.noTopic.reason.isEmpty)
    }
}
