import CStreamsSSL
import Foundation
import Glibc

/// Starting child processes (`sse-gateway`, `curl`, `openssl`) from tests.
///
/// `posix_spawn`, not Foundation's `Process`: on Swift 6.3.1 `Process.run()`
/// over-reads `dirent.d_name` while it lists `/proc/self/fd` and crashes now
/// and then (swift-corelibs-foundation PR #5472) — often in a test process
/// with hundreds of sockets open. Here the child closes every descriptor from
/// 3 up itself, so nothing of this process leaks into it; its standard input
/// is `/dev/null`; its signal mask is empty and SIGPIPE, SIGHUP, SIGTERM,
/// SIGINT and SIGCHLD have their default actions (the cooperative pool's
/// threads block some signals, and a child must not inherit that).
public enum Spawn {
    /// Starts `executable` (a path, or a name looked up in `PATH`) with
    /// `arguments` and exactly `environment`, its standard output and error
    /// on the given descriptors (which the caller closes afterwards).
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String],
                             stdout: Int32, stderr: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        cstreams_spawn_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGHUP, SIGTERM, SIGINT, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnFailed(executable: executable, errno: result) }
        return pid
    }

    /// A pipe whose two ends are close-on-exec: (read, write).
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard cstreams_pipe2(&ends, O_CLOEXEC) == 0 else { throw SpawnFailed(executable: "pipe2", errno: errno) }
        return (ends[0], ends[1])
    }

    /// How a `waitpid` status ended: an exit code, or the signal that killed it.
    public static func decode(_ status: Int32) -> (exited: Bool, code: Int32) {
        status & 0x7f == 0 ? (true, (status >> 8) & 0xff) : (false, status & 0x7f)
    }

    /// Runs `executable` to its end, blocking the calling thread (for
    /// synchronous set-up such as making certificates): its exit status
    /// (128 + signal when killed) and standard error.
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let errors = Scratch.directory + "/run-\(UUID().uuidString).err"
        let fd = Glibc.open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SpawnFailed(executable: executable, errno: errno) }
        defer { unlink(errors) }
        let pid: pid_t
        do {
            pid = try start(executable, arguments, environment: ProcessInfo.processInfo.environment, stdout: fd, stderr: fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
        Glibc.close(fd)
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let (exited, code) = decode(raw)
        return (exited ? code : 128 + code, readText(errors))
    }

    /// The file's bytes as text ("" if it cannot be read). Not `String(contentsOfFile:)`:
    /// on an empty file (a child that printed nothing) FoundationEssentials leaks the
    /// 4 KiB buffer it read into, and AddressSanitizer's leak check fails the run.
    private static func readText(_ path: String) -> String {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public struct SpawnFailed: Error, CustomStringConvertible {
        public let executable: String
        public let errno: Int32
        public var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
    }
}

/// A directory for this test process's throwaway files (certificates, child
/// output), created on first use with mode 0700 and removed at exit.
public enum Scratch {
    public static let directory: String = {
        let path = NSTemporaryDirectory() + "streams-tests-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        atexit {
            try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "streams-tests-\(getpid())")
        }
        return path
    }()
}
