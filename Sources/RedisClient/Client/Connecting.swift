import Dispatch
import Glibc
import HTTPCore
import Locking

/// How both kinds of connection open: resolve the host, connect over TCP, start
/// the pipeline's tasks, then AUTH and SELECT — all within one deadline, and
/// every failure reported as `.unreachable(reason)`.
enum Connecting {
    static func open(_ url: RedisURL, timeout: Duration, loop: EventLoop,
                     onMessage: PipelineCore.MessageHandler?) async throws(RedisError) -> PipelineCore {
        let deadline = ContinuousClock.now + timeout
        let address = try await resolve(url, timeout: timeout)
        let connection: Connection
        do {
            connection = try await Connection.connect(to: address, loop: loop, deadline: deadline)
        } catch let error as SystemError {
            throw .unreachable("connect to \(address): \(String(cString: strerror(error.errno)))")
        } catch IOWaitError.timedOut {
            throw .unreachable("connect to \(address): no answer within \(timeout)")
        } catch {
            throw .unreachable("connect to \(address): \(error)")
        }
        let core = PipelineCore(connection: connection, loop: loop, onMessage: onMessage)
        core.start()
        do throws(RedisError) {
            if let password = url.password {
                let arguments = url.user.map { ["AUTH", $0, password] } ?? ["AUTH", password]
                try await handshake(core, arguments, name: "AUTH", deadline: deadline)
            }
            if url.database != 0 {
                try await handshake(core, ["SELECT", String(url.database)], name: "SELECT", deadline: deadline)
            }
        } catch {
            core.close()
            throw error
        }
        return core
    }

    private static func handshake(_ core: PipelineCore, _ arguments: [String], name: String,
                                  deadline: ContinuousClock.Instant) async throws(RedisError) {
        do {
            _ = try await core.command(RedisArguments(arguments), timeout: deadline - .now)
        } catch {
            switch error {
            case .server(let message): throw .unreachable("\(name) refused: \(message)")
            case .timedOut: throw .unreachable("\(name): no reply in time")
            case .closed: throw .unreachable("\(name): the server closed the connection")
            case .protocolError(let reason): throw .unreachable("\(name): \(reason)")
            case .unreachable, .cancelled: throw error
            }
        }
    }

    /// A numeric host or `localhost` at once; any other name through
    /// `getaddrinfo` on a Dispatch queue (it blocks: never on the loop or the
    /// pool), abandoned when `timeout` passes first (its late answer is dropped).
    static func resolve(_ url: RedisURL, timeout: Duration) async throws(RedisError) -> SocketAddress {
        if let address = SocketAddress(numericHost: url.host, port: url.port) { return address }
        if url.host.lowercased() == "localhost", let address = SocketAddress(numericHost: "127.0.0.1", port: url.port) {
            return address
        }
        let host = url.host
        let port = url.port
        let outcome: Resolution = await withUnsafeContinuation { continuation in
            let once = ResumeOnce(continuation)
            DispatchQueue.global().async {
                once.resume(SocketAddress.resolve(host: host, port: port).map(Resolution.resolved) ?? .unknown)
            }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                once.resume(.timedOut)
            }
        }
        switch outcome {
        case .resolved(let address): return address
        case .unknown: throw .unreachable("cannot resolve host \(host)")
        case .timedOut: throw .unreachable("resolving host \(host) took longer than \(timeout)")
        }
    }

    private enum Resolution: Sendable {
        case resolved(SocketAddress)
        case unknown
        case timedOut
    }

    /// Resumes a continuation with the first of two racing outcomes.
    private final class ResumeOnce: Sendable {
        private let continuation: Locked<UnsafeContinuation<Resolution, Never>?>

        init(_ continuation: UnsafeContinuation<Resolution, Never>) {
            self.continuation = Locked(continuation)
        }

        func resume(_ outcome: Resolution) {
            let taken = continuation.withLock { $0.take() }
            taken?.resume(returning: outcome)
        }
    }
}
