import Glibc

/// The file calls the static file server makes, through `Syscall`: resolve a path,
/// open it without following a last symlink or blocking on a FIFO, look at what was
/// opened, read it whole. Every call blocks: run them off the event loop.
public enum FileSystem {
    /// What an open descriptor is, as `fstat` tells.
    public struct Status: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            case regular
            case directory
            case other
        }

        public var kind: Kind
        public var size: Int
        public var modifiedSeconds: Int
        public var modifiedNanoseconds: Int
    }

    /// The canonical absolute path (every symlink followed); nil when it does not resolve.
    public static func realPath(_ path: String) -> String? {
        Syscall.realPath(path)
    }

    /// Opens `path` read-only, close-on-exec, refusing a symlink as the last component
    /// and never blocking (a FIFO left in the tree opens at once). Nil on any failure.
    public static func openForReading(_ path: String) -> Int32? {
        try? Syscall.openForReading(path, flags: O_NOFOLLOW | O_NONBLOCK)
    }

    /// The status of an open descriptor; nil on failure.
    public static func status(_ fd: Int32) -> Status? {
        guard let status = try? Syscall.fileStatus(fd) else { return nil }
        let kind: Status.Kind
        switch status.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        return Status(kind: kind, size: Int(status.st_size), modifiedSeconds: Int(status.st_mtim.tv_sec),
                      modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }

    /// Up to `size` bytes from offset 0; fewer when the file shrank meanwhile. Nil on a read error.
    public static func read(_ fd: Int32, size: Int) -> [UInt8]? {
        var failed = false
        let body = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                guard let n = try? Syscall.pread(fd, UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[count...])),
                                                 offset: count) else {
                    failed = true
                    return
                }
                if n == 0 { return }
                count += n
            }
        }
        return failed ? nil : body
    }

    /// Closes a descriptor this module opened. Never retried.
    public static func close(_ fd: Int32) {
        Syscall.close(fd)
    }
}
