import HTTPCore

/// How an SSE response ended, as every test reader reports it.
public enum SSEEnding: Equatable, Sendable {
    /// The chunked terminator `0\r\n\r\n` arrived, then EOF: the server ended the stream cleanly.
    case terminated
    /// EOF or a reset without the terminator (a cut: overflow, or the grace ran out).
    case cut(String)
    /// The last event that arrived has the id the reader waited for (`StalledStream`).
    case reached
    /// Nothing ended it within the wait.
    case stillOpen
}

/// A test harness could not do what it was asked (no start line, no head…).
public struct HarnessFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// No event arrived within the wait.
public struct StreamTimedOut: Error {
    public let seconds: Double
    public init(seconds: Double) { self.seconds = seconds }
}

extension HTTPClient {
    /// Reads the rest of a response until it ends or `seconds` pass, handing each body
    /// chunk to `body` (dropped by default), and says how it ended.
    public func readToEnding(upTo seconds: Double, body: ([UInt8]) -> Void = { _ in }) async -> SSEEnding {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        do {
            while true {
                switch try await nextEvent(deadline: deadline) {
                case .body(let bytes): body(bytes)
                case .head: return .cut("a second response head")
                case nil: return .cut("EOF before the chunked terminator")
                case .end:
                    // HTTP/2: the stream's END_STREAM is the clean end; the connection goes on.
                    if isHTTP2 { return .terminated }
                    let after = try await connection.read(deadline: deadline)
                    return after.isEmpty ? .terminated : .cut("bytes after the terminator")
                }
            }
        } catch IOWaitError.timedOut {
            return .stillOpen
        } catch {
            return .cut("\(error)")
        }
    }
}
