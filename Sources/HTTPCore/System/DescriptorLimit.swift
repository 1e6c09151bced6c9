/// The process's open-descriptor limit (`RLIMIT_NOFILE`), which caps how many
/// connections one process can hold. Shared by the gateway and the load tool.
public enum DescriptorLimit {
    /// Raises the soft limit to the hard one (as nginx's `worker_rlimit_nofile`
    /// would) and returns the soft limit then in force.
    @discardableResult
    public static func raiseToHard() -> UInt64 {
        let limit = Syscall.descriptorLimit()
        if limit.soft < limit.hard, Syscall.setDescriptorLimit(soft: limit.hard) { return limit.hard }
        return limit.soft
    }
}
