@testable import HTTPCore

/// What a parser produced from some input: its events in order, and the refusal if any.
struct ParseOutcome {
    var events: [HTTPParserEvent] = []
    var error: HTTPParseError?

    /// The complete requests among the events.
    var requests: [HTTPRequest] {
        events.compactMap { if case .request(let r) = $0 { r } else { nil } }
    }
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

func limits(header: Int = 16 * 1024, uri: Int = 8 * 1024, body: Int = 64 * 1024) -> HTTPLimits {
    var l = HTTPLimits()
    l.maxHeaderBytes = header
    l.maxURIBytes = uri
    l.maxBodyBytes = body
    return l
}

/// Drains every event the parser can produce now into `outcome`.
func drain(_ parser: inout HTTPRequestParser, into outcome: inout ParseOutcome) {
    do {
        while let event = try parser.next() { outcome.events.append(event) }
    } catch {
        outcome.error = error
    }
}

/// Feeds `pieces` one at a time, draining events after each, stopping at a refusal.
func feed(_ pieces: [[UInt8]], limits: HTTPLimits = HTTPLimits()) -> ParseOutcome {
    var parser = HTTPRequestParser(limits: limits)
    var outcome = ParseOutcome()
    for piece in pieces where outcome.error == nil {
        parser.append(piece)
        drain(&parser, into: &outcome)
    }
    return outcome
}

func parse(_ raw: String, limits: HTTPLimits = HTTPLimits()) -> ParseOutcome {
    feed([bytes(raw)], limits: limits)
}

/// The status code a refused input gets (nil when it is not refused).
func refusal(_ raw: String, limits: HTTPLimits = HTTPLimits()) -> Int? {
    parse(raw, limits: limits).error?.status.code
}

/// The input split in two at `cut`.
func split(_ data: [UInt8], at cut: Int) -> [[UInt8]] {
    [Array(data[..<cut]), Array(data[cut...])]
}

/// The input as one piece per byte.
func bytewise(_ data: [UInt8]) -> [[UInt8]] {
    data.map { [$0] }
}
