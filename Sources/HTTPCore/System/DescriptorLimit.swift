import Glibc

/// The process's open-descriptor limit (`RLIMIT_NOFILE`), which caps how many
/// connections one process can hold. Shared by the gateway and the load tool.
public enum DescriptorLimit {
    /// The soft and hard limits now.
    public static var current: (soft: UInt64, hard: UInt64) { Syscall.descriptorLimit() }

    /// Raises the soft limit to the hard one (as nginx's `worker_rlimit_nofile`
    /// would) and returns the soft limit then in force.
    @discardableResult
    public static func raiseToHard() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }
}
