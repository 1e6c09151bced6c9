import CStreamsSSL
import Glibc
import Locking
import Synchronization

/// A listening TCP socket on the event loop. Accepted connections are born
/// non-blocking and close-on-exec, with `TCP_NODELAY` (the gateway batches
/// its own writes, so Nagle would only add latency).
public final class Listener: Sendable {
    public let fd: Int32
    /// The port actually bound (useful with port 0).
    public let port: Int
    let registration: LoopRegistration
    let loop: EventLoop
    /// True until `close`; `accept4` runs under it so a closed (and reused)
    /// descriptor number is never accepted on.
    private let isOpen = Locked(true)

    /// Binds and listens. `SO_REUSEADDR` so a restart does not wait for TIME_WAIT.
    public init(address: SocketAddress, backlog: Int32 = 4096, loop: EventLoop = .shared) throws(SystemError) {
        let fd = try Syscall.tcpSocket(family: address.family)
        do {
            try Syscall.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            try Syscall.bind(fd, address)
            try Syscall.listen(fd, backlog: backlog)
            port = try Syscall.localPort(fd)
            registration = try loop.register(fd)
        } catch {
            Syscall.close(fd)
            throw error
        }
        self.fd = fd
        self.loop = loop
    }

    /// Waits for and accepts one connection; with `tls`, a server-side TLS
    /// connection (with the context current when the connection arrives, so
    /// a reload applies to the next one) whose handshake the caller runs.
    /// - Throws: `SystemError` (`EMFILE`, `ENFILE`, `ENOMEM`… which the caller backs off from),
    ///   `IOWaitError.closed` once `close` was called, `CancellationError`.
    /// - Parameter target: the loop the connection waits on (the listener's by default).
    public func accept(counters: ConnectionCounters? = nil, tls: TLSServerContext? = nil,
                       on target: EventLoop? = nil) async throws -> Connection {
        while true {
            let outcome = try isOpen.withLock { open throws(SystemError) -> IOResult<Int32>? in
                open ? try Syscall.accept(fd) : nil
            }
            guard let outcome else { throw IOWaitError.closed }
            switch outcome {
            case .processed(let client):
                try? Syscall.setOption(client, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
                let connection = try Connection(adopting: client, loop: target ?? loop, counters: counters, tls: tls?.context)
                counters?.open.add(1, ordering: .relaxed)
                counters?.accepted.add(1, ordering: .relaxed)
                return connection
            case .wouldBlock:
                try await loop.wait(for: .read, on: registration, deadline: nil)
            }
        }
    }

    /// Stops listening: a task waiting in `accept` ends with `IOWaitError.closed`.
    public func close() {
        let wasOpen = isOpen.withLock { open -> Bool in
            defer { open = false }
            return open
        }
        guard wasOpen else { return }
        loop.deregister(registration)
        Syscall.close(fd)
    }
}
