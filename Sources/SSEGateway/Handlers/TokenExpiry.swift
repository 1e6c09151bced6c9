import JWT
import StreamHub

/// Ends a stream when the token it was opened with stops being accepted
/// (API.md: "An open stream ends when its token expires"; the client
/// reconnects with a fresh one).
enum TokenExpiry {
    /// Runs `stream` (a subscription's write loop); if `acceptedUntil`
    /// (seconds since the epoch) comes first, cancels `subscription`, so the
    /// loop finds no more frames and the response ends cleanly. Without a
    /// deadline it is just `stream()`. The timer is a child task of the
    /// connection's task and never outlives the stream.
    static func endStream(of subscription: Subscription, at acceptedUntil: Double?,
                          _ stream: () async -> Void) async {
        guard let acceptedUntil else { return await stream() }
        await withDiscardingTaskGroup { group in
            group.addTask {
                let remaining = acceptedUntil - JWTVerifier.wallClock()
                if remaining > 0 { try? await Task.sleep(for: .milliseconds(Int64(remaining * 1000))) }
                if !Task.isCancelled { subscription.cancel() }
            }
            await stream()
            group.cancelAll()
        }
    }
}
