import CStreamsSSL
import Glibc

/// Every system call the server makes, wrapped once. `EINTR` retries, `EAGAIN`
/// becomes `.wouldBlock`, `EBADF`/`EFAULT` trap (they are bugs in this program),
/// anything else throws `SystemError`. `close` is never retried.
enum Syscall {
    @inline(__always)
    private static func retrying<T: FixedWidthInteger>(
        _ call: @autoclosure () -> String, _ body: () -> T
    ) throws(SystemError) -> IOResult<T> {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let code = Glibc.errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                return .wouldBlock
            case EBADF, EFAULT:
                preconditionFailure("\(call()) on a bad descriptor or address: a bug in this program (errno \(code))")
            default:
                throw SystemError(call: call(), errno: code)
            }
        }
    }

    /// Calls that never answer "would block".
    @inline(__always)
    private static func checked<T: FixedWidthInteger>(
        _ call: @autoclosure () -> String, _ body: () -> T
    ) throws(SystemError) -> T {
        switch try retrying(call(), body) {
        case .processed(let value): return value
        case .wouldBlock: throw SystemError(call: call(), errno: EAGAIN)
        }
    }

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    static func writev(_ fd: Int32, _ iov: UnsafePointer<iovec>, _ count: Int32) throws(SystemError) -> IOResult<Int> {
        try retrying("writev") { Glibc.writev(fd, iov, count) }
    }

    /// Accepts one connection, born non-blocking and close-on-exec.
    static func accept(_ fd: Int32) throws(SystemError) -> IOResult<Int32> {
        try retrying("accept4") {
            cstreams_accept4(fd, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
        }
    }

    /// A TCP socket, born non-blocking and close-on-exec.
    static func tcpSocket(family: Int32) throws(SystemError) -> Int32 {
        sigpipeIgnored
        return try checked("socket") {
            Glibc.socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        }
    }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SystemError) {
        var value = value
        _ = try checked("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    static func setLinger(_ fd: Int32, onSeconds: Int32) throws(SystemError) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: onSeconds)
        _ = try checked("setsockopt(SO_LINGER)") {
            Glibc.setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
    }

    static func pendingError(_ fd: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try checked("getsockopt(SO_ERROR)") { Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) }
        return value
    }

    static func bind(_ fd: Int32, _ address: SocketAddress) throws(SystemError) {
        _ = try address.withSockaddr { pointer, length throws(SystemError) in
            try checked("bind") { Glibc.bind(fd, pointer, length) }
        }
    }

    static func listen(_ fd: Int32, backlog: Int32) throws(SystemError) {
        _ = try checked("listen") { Glibc.listen(fd, backlog) }
    }

    /// Starts a non-blocking connect: `.wouldBlock` means "in progress, wait until writable".
    static func connect(_ fd: Int32, _ address: SocketAddress) throws(SystemError) -> IOResult<Int32> {
        try address.withSockaddr { pointer, length throws(SystemError) in
            while true {
                if Glibc.connect(fd, pointer, length) == 0 { return .processed(0) }
                let code = Glibc.errno
                switch code {
                case EINTR: continue
                case EINPROGRESS, EAGAIN: return .wouldBlock
                case EBADF, EFAULT: preconditionFailure("connect on a bad descriptor: a bug in this program")
                default: throw SystemError(call: "connect", errno: code)
                }
            }
        }
    }

    static func localPort(_ fd: Int32) throws(SystemError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa throws(SystemError) in
                try checked("getsockname") { Glibc.getsockname(fd, sa, &length) }
            }
        }
        return SocketAddress(storage: storage)?.port ?? 0
    }

    /// Opens a file for reading only (close-on-exec); `flags` are added (`O_NOFOLLOW`, `O_NONBLOCK`).
    static func openForReading(_ path: String, flags: Int32 = 0) throws(SystemError) -> Int32 {
        try checked("open") { Glibc.open(path, O_RDONLY | O_CLOEXEC | flags) }
    }

    /// The status of an open descriptor.
    static func fileStatus(_ fd: Int32) throws(SystemError) -> stat {
        var status = stat()
        _ = try checked("fstat") { Glibc.fstat(fd, &status) }
        return status
    }

    /// Whether the open descriptor is a regular file (not a directory, device…).
    static func isRegularFile(_ fd: Int32) throws(SystemError) -> Bool {
        try fileStatus(fd).st_mode & S_IFMT == S_IFREG
    }

    /// Reads at `offset` without moving the file position; 0 at the end of the file.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, offset: Int) throws(SystemError) -> Int {
        try checked("pread") { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// The canonical absolute path (every symlink followed); nil when it does not resolve.
    static func realPath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A pipe whose ends are born non-blocking and close-on-exec.
    static func pipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try checked("pipe2") { cstreams_pipe2(&ends, O_NONBLOCK | O_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Writes all of `bytes` to a blocking descriptor (standard output or error); gives up on an error.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                try? retrying("write") { Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
            }
            guard case .processed(let count) = written, count > 0 else { return }
            offset += count
        }
    }

    /// Whether `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool {
        Glibc.isatty(fd) != 0
    }

    /// `CLOCK_MONOTONIC`, in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// User plus system CPU time this process has used, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Shuts both directions down; the descriptor stays open (closing is the owner's job).
    static func shutdown(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Ends our sending direction (the peer reads EOF); reading continues.
    static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes a descriptor exactly once. Never retried: after `EINTR` the descriptor is gone on Linux.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    static func epollCreate() throws(SystemError) -> Int32 {
        try checked("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    static func epollControl(_ epfd: Int32, _ op: Int32, _ fd: Int32, events: UInt32, data: UInt64) throws(SystemError) {
        var event = cstreams_epoll_event(events, data)
        _ = try checked("epoll_ctl") { epoll_ctl(epfd, op, fd, &event) }
    }

    static func epollWait(_ epfd: Int32, _ events: UnsafeMutablePointer<epoll_event>, _ capacity: Int32, timeoutMilliseconds: Int32) throws(SystemError) -> Int {
        switch try retrying("epoll_wait", { epoll_wait(epfd, events, capacity, timeoutMilliseconds) }) {
        case .processed(let count): return Int(count)
        case .wouldBlock: return 0
        }
    }

    static func eventFD() throws(SystemError) -> Int32 {
        try checked("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    /// Adds one to an eventfd's counter, waking whoever polls it. A full counter already wakes.
    static func signalEventFD(_ fd: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    static func drainEventFD(_ fd: Int32) {
        var value: UInt64 = 0
        _ = Glibc.read(fd, &value, 8)
    }

    /// The soft and hard open-descriptor limits.
    static func descriptorLimit() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Sets the soft open-descriptor limit (at most the hard one); false when refused.
    static func setDescriptorLimit(soft: UInt64) -> Bool {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        limit.rlim_cur = rlim_t(soft)
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0
    }

    /// `SIGPIPE` would kill the process on a write to a closed socket (ours, or
    /// OpenSSL's socket BIO); we want `EPIPE` instead. Set once, by the first
    /// socket the process makes (`tcpSocket`): every connection starts there.
    private static let sigpipeIgnored: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()
}
