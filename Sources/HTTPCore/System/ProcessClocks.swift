/// CPU time this process has used (`getrusage`).
public enum ProcessCPU {
    /// User plus system time, in seconds.
    public static func seconds() -> Double { Syscall.cpuSeconds() }
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock `sse-load`'s publishers stamp payloads
/// with and its subscribers read on arrival. One process, one clock, so the
/// difference is the delivery latency without any clock synchronisation.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 { Syscall.monotonicNanoseconds() }
}
