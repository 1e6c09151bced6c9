import CStreamsSSL

/// OpenSSL's per-thread error queue, read right after the call that failed
/// (on the same thread: every SSL call runs synchronously under a lock, never
/// across an `await`).
enum OpenSSLErrors {
    /// Forgets earlier errors, so the next call's outcome is its own.
    static func clear() {
        ERR_clear_error()
    }

    /// The oldest queued error's library and reason codes, without removing it.
    static func peekReason() -> (library: Int32, reason: Int32)? {
        let code = ERR_peek_error()
        guard code != 0 else { return nil }
        return (cstreams_ERR_GET_LIB(code), cstreams_ERR_GET_REASON(code))
    }

    /// Every queued error as one line ("a; b"), emptying the queue;
    /// `fallback` when the queue was empty.
    static func drain(fallback: String = "unknown OpenSSL error") -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            guard code != 0 else { break }
            if let text = ERR_reason_error_string(code) {
                reasons.append(String(cString: text))
            } else {
                reasons.append("error \(code)")
            }
        }
        return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
    }
}
