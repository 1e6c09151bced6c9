import Glibc
import HTTPCore

/// The process's open-descriptor limit, which caps how many connections one
/// run can hold.
enum DescriptorLimit {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (as the gateway does)
    /// and returns the soft limit then in force.
    static func raise() -> UInt64 { HTTPCore.DescriptorLimit.raiseToHard() }

    /// Descriptors a run needs: one per connection plus a reserve for the
    /// event loop, standard streams and the runtime.
    static func needed(for configuration: LoadConfiguration) -> UInt64 {
        UInt64(configuration.subscribers + configuration.publishers + 64)
    }
}

/// CPU time this process has used, from `getrusage`.
enum ProcessCPU {
    static func seconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
