import GatewayAPI
import HTTPCore
import StreamHub
import Testing

struct RouteTests {
    /// Channel paths route by method: GET and HEAD subscribe, POST publishes, OPTIONS is a preflight.
    @Test func channelPathsRouteByMethod() {
        #expect(Route.match(method: "GET", rawPath: "/events/chat/1") == .subscribe(.events, topic: "chat/1"))
        #expect(Route.match(method: "HEAD", rawPath: "/state/a") == .subscribe(.state, topic: "a"))
        #expect(Route.match(method: "POST", rawPath: "/state/%41") == .publish(.state, topic: "A"))
        #expect(Route.match(method: "OPTIONS", rawPath: "/events/a") == .preflight(allow: Route.channelMethods))
        #expect(Route.match(method: "DELETE", rawPath: "/events/a") == .methodNotAllowed(allow: Route.channelMethods))
    }

    /// A bad topic is refused whatever the method that may reach it; the bare channel paths are empty topics.
    @Test func badTopicsAreRefused() {
        #expect(Route.match(method: "POST", rawPath: "/events/a//b")
            == .badTopic(TopicError(subject: .topic, problem: .emptySegment)))
        #expect(Route.match(method: "POST", rawPath: "/state") == .badTopic(TopicError(subject: .topic, problem: .empty)))
        #expect(Route.match(method: "GET", rawPath: "/events/") == .badTopic(TopicError(subject: .topic, problem: .empty)))
        #expect(Route.match(method: "GET", rawPath: "/state/caf\u{E9}")
                == .badTopic(TopicError(subject: .topic, problem: .disallowedCharacter)))
        // A combining mark right after the slash (only HTTP/2 can carry it): still a channel
        // path, its topic refused (it was a file path while the prefix was compared by Character).
        #expect(Route.match(method: "POST", rawPath: "/state/\u{301}a")
                == .badTopic(TopicError(subject: .topic, problem: .disallowedCharacter)))
        #expect(Route.match(method: "POST", rawPath: "/events/a.b/c~d_e-f") == .publish(.events, topic: "a.b/c~d_e-f"))
    }

    /// `GET`/`HEAD /events` and `/state` with `?topic=` parameters are several-topic streams; without, 400.
    @Test func severalTopicsRoute() {
        #expect(Route.match(method: "GET", rawPath: "/events", query: "topic=a&topic=b%2Fc")
            == .subscribeTopics(.events, topics: ["a", "b/c"]))
        #expect(Route.match(method: "HEAD", rawPath: "/state", query: "topic=a") == .subscribeTopics(.state, topics: ["a"]))
        #expect(Route.match(method: "GET", rawPath: "/state") == .badTopics(.noTopic))
        #expect(Route.match(method: "GET", rawPath: "/events", query: "topic=a&topic=a") == .badTopics(.duplicateTopic))
        #expect(Route.match(method: "GET", rawPath: "/events/", query: "topic=a") == .badTopic(TopicError(subject: .topic, problem: .empty)))
        #expect(Route.match(method: "OPTIONS", rawPath: "/events", query: "topic=a") == .preflight(allow: Route.channelMethods))
    }

    /// Every other path is read-only: health, metrics, else the page's files.
    @Test func otherPathsAreReadOnly() {
        #expect(Route.match(method: "GET", rawPath: "/healthz") == .health)
        #expect(Route.match(method: "GET", rawPath: "/readyz") == .ready)
        #expect(Route.match(method: "HEAD", rawPath: "/metrics") == .metrics)
        #expect(Route.match(method: "GET", rawPath: "/") == .file)
        #expect(Route.match(method: "GET", rawPath: "/stateful") == .file)
        #expect(Route.match(method: "GET", rawPath: "/stat") == .file)
        #expect(Route.match(method: "GET", rawPath: "/eventsx/a") == .file)
        #expect(Route.match(method: "GET", rawPath: "/State/a") == .file)
        #expect(Route.match(method: "POST", rawPath: "/") == .methodNotAllowed(allow: Route.readMethods))
        #expect(Route.match(method: "OPTIONS", rawPath: "/metrics") == .preflight(allow: Route.readMethods))
    }

    /// `?event=`: the last one wins, decoded once; a malformed escape anywhere is refused.
    @Test func publishQuery() {
        #expect(PublishQuery.eventName(in: nil) == .success(nil))
        #expect(PublishQuery.eventName(in: "x=1") == .success(nil))
        #expect(PublishQuery.eventName(in: "event=a&event=b%41") == .success("bA"))
        #expect(PublishQuery.eventName(in: "event=%2541") == .failure(.badEventName(TopicError(subject: .eventName, problem: .disallowedCharacter))))
        #expect(PublishQuery.eventName(in: "x=%zz&event=a") == .failure(.malformed))
    }

    /// The publish token: `Bearer` in any case, the exact token, nothing else.
    @Test func publishToken() {
        let token = PublishToken("s3cret")
        #expect(token.authorizes("Bearer s3cret"))
        #expect(token.authorizes("bearer s3cret"))
        #expect(!token.authorizes("Bearer s3cre"))
        #expect(!token.authorizes("Bearer s3cret2"))
        #expect(!token.authorizes("Basic s3cret"))
        #expect(!token.authorizes(nil))
    }
}
