import Dispatch
import Glibc
import HTTPCore

/// Delivers POSIX signals as calls on a dispatch queue, never in a signal handler.
/// Owned by `Gateway.run()` and used only there.
///
/// The handlers are installed synchronously (`SignalPipe`) and only write the
/// signal's number to a pipe; a dispatch read source turns bytes into calls. So
/// from the moment `init` returns no signal is lost or fatal, even one that
/// arrives before the read source is registered (the byte waits in the pipe).
/// Dispatch signal sources were not: they set up their handler asynchronously,
/// and `SIG_IGN` in the meantime dropped the signal.
final class SignalWatcher {
    private let source: any DispatchSourceRead

    init(signals: [Int32], handler: @escaping @Sendable (String) -> Void) {
        let queue = DispatchQueue(label: "sse-gateway.signals")
        source = DispatchSource.makeReadSource(fileDescriptor: SignalPipe.readDescriptor, queue: queue)
        source.setEventHandler {
            for number in SignalPipe.drain() { handler(SignalWatcher.name(of: number)) }
        }
        source.resume()
        SignalPipe.install(signals)
    }

    /// Stops delivering calls. The handlers stay installed (a late signal is
    /// then a no-op byte in the pipe), so a signal during the last steps of a
    /// shutdown cannot kill the process with a non-zero status.
    func cancel() {
        source.cancel()
    }

    private static func name(of number: Int32) -> String {
        switch number {
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(number)"
        }
    }
}
