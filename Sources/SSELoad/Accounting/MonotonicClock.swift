import Glibc

/// `CLOCK_MONOTONIC` in nanoseconds: the clock publishers stamp payloads with
/// and subscribers read on arrival. One process, one clock, so the difference
/// is the delivery latency without any clock synchronisation.
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
