import Foundation
import Glibc
import Locking

/// A TCP proxy on 127.0.0.1 between one client (a gateway) and one upstream port (a
/// Redis), to partition that one link while everything else goes on: real sockets,
/// the small asyncio script `Tests/proxy/link_proxy.py` run by `python3`.
///
/// Promises: `start` returns once the proxy accepts; `cut`, `stall` and `restore`
/// return once the proxy has switched (it acknowledges each change on its standard
/// output), within 5 s or they throw. `stop()` (or the value going away) ends it.
public final class LinkProxy: Sendable {
    /// The port the client connects to instead of the upstream's.
    public let port: Int
    public let upstreamPort: Int
    private let child: ChildProcess
    /// Changes sent so far (the proxy numbers its acknowledgements the same way).
    private let changes = Locked(0)

    public static let script = packageRoot + "/Tests/proxy/link_proxy.py"

    /// `redis://127.0.0.1:<port>` through the proxy.
    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Starts a proxy to 127.0.0.1:`upstreamPort`.
    public static func start(to upstreamPort: Int) async throws -> LinkProxy {
        let child = try ChildProcess("/usr/bin/env", ["python3", script, String(upstreamPort)])
        let pattern = #/listening (\d+)/#
        _ = await child.stdout.wait(upTo: 10) { $0.contains(pattern) }
        guard let match = child.stdout.text.firstMatch(of: pattern), let port = Int(match.1) else {
            await child.stop()
            throw HarnessFailure("the link proxy did not start: \(child.stdout.text) \(child.stderr.text)")
        }
        return LinkProxy(child: child, port: port, upstreamPort: upstreamPort)
    }

    private init(child: ChildProcess, port: Int, upstreamPort: Int) {
        self.child = child
        self.port = port
        self.upstreamPort = upstreamPort
    }

    deinit {
        child.send(SIGKILL)
    }

    /// Resets every proxied connection (both ends) and resets new ones as they arrive:
    /// the link is down, as when a cable or a firewall cuts it.
    public func cut() async throws { try await change(SIGUSR1, "cut") }

    /// Keeps every connection open but forwards nothing either way, new ones included:
    /// a silent network. What was sent meanwhile flows on `restore`, as TCP would retransmit it.
    public func stall() async throws { try await change(SIGUSR2, "stall") }

    /// Forwards everything but the messages Redis pushes to subscribers: pub/sub
    /// connections stay open and answer their commands, but deliver nothing.
    public func mute() async throws { try await change(SIGWINCH, "mute") }

    /// Forwards again, and proxies new connections.
    public func restore() async throws { try await change(SIGHUP, "flowing") }

    public func stop() async { await child.stop() }

    private func change(_ signal: Int32, _ mode: String) async throws {
        let number = changes.withLock { changes in
            changes += 1
            return changes
        }
        child.send(signal)
        let line = "mode \(number) \(mode)\n"
        guard await child.stdout.wait(upTo: 5, until: { $0.contains(line) }) else {
            throw HarnessFailure("the link proxy did not acknowledge \(mode): \(child.stdout.text) \(child.stderr.text)")
        }
    }
}
