import Glibc

/// One buffer per loop that a non-blocking read on the loop's thread lands in before
/// its bytes are copied into an array of their size (`Connection.readAvailable`).
/// Why: an array of the read's full size per read cost the standard library's
/// unspecialized allocation (about 800 instructions of a publish request, issue 27), a
/// temporary allocation of 4 KiB goes to the heap (an aligned `malloc`, about 750), and
/// a zeroed stack buffer costs its `memset`.
///
/// `@unchecked Sendable`: the bytes are touched only through `withBytes`, which the
/// loop's own thread alone may enter (the caller checks `EventLoop.isLoopThread`; other
/// threads read into buffers of their own), and only for a synchronous body that
/// neither suspends nor reads again, so no two uses overlap. Never freed: a loop lives
/// as long as the process.
final class LoopReadBuffer: @unchecked Sendable {
    let count: Int
    private let bytes: UnsafeMutableRawBufferPointer

    init(count: Int) {
        self.count = count
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
    }

    /// `body` with the first `count` bytes (at most `self.count`). On the loop's thread only.
    @inline(__always)
    func withBytes<R, E: Error>(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count]))
    }
}
