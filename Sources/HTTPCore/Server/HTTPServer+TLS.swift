/// The TLS step of a connection, before any HTTP: the handshake, and what
/// happens when it fails. A failure ends that connection only.
extension HTTPServer {
    /// Completes the TLS handshake by `deadline`; true at once for a plain
    /// connection. False when the connection should close: the handshake
    /// failed or stalled (counted in `tlsHandshakeFailures`), the client spoke
    /// plain HTTP (answered `400` in plain text), or the server is shutting
    /// down. While it waits for the client the connection counts as idle, so
    /// shutdown closes it at once.
    func establishTLS(on connection: Connection, deadline: ContinuousClock.Instant) async -> Bool {
        guard connection.isTLS else { return true }
        guard enterIdle(connection) else { return false }
        defer { leaveIdle(connection) }
        do {
            try await connection.handshake(deadline: deadline)
            return true
        } catch TLSError.plainHTTPRequest {
            counters.tlsHandshakeFailures.add(1, ordering: .relaxed)
            let answerBy = ContinuousClock.now + .seconds(2)
            // Answered unencrypted, as nginx does, so the client can read why.
            let answer = refusal(.badRequest, "This port speaks HTTPS: use an https:// URL.")
            try? await connection.writeBypassingTLS(answer, deadline: answerBy)
            await connection.finishAndDiscard(limit: 64 * 1024, until: .from(answerBy))
            return false
        } catch {
            counters.tlsHandshakeFailures.add(1, ordering: .relaxed)
            return false
        }
    }
}
