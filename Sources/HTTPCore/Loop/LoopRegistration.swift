/// A descriptor's place in the event loop: the descriptor and the generation it
/// was registered under. Events carry both (packed in `epoll_data.u64`), so an
/// event for a descriptor that was closed and reused is dropped, not misdelivered.
public struct LoopRegistration: Sendable, Hashable {
    public let fd: Int32
    let generation: UInt32

    var token: UInt64 { UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd)) }
}
