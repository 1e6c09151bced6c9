/// Which readiness a task waits for.
enum Interest: Sendable {
    case read
    case write
}

/// Which of a descriptor's (at most) two tasks waits: the one that reads or
/// the one that writes. Each has its own waiter and its own unconsumed edges:
/// over TLS the reader may need writability (`SSL_read` has to send) and the
/// writer readability (`SSL_write` has to receive), and neither may consume
/// the edge the other is waiting for.
enum IORole: Sendable {
    case reader
    case writer

    static let both: [IORole] = [.reader, .writer]

    /// The role that normally waits for `interest`.
    init(natural interest: Interest) {
        self = interest == .read ? .reader : .writer
    }
}
