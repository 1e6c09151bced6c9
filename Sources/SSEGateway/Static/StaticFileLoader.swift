import Glibc

/// What a lookup below the root found.
enum StaticFileLoad: Sendable, Equatable {
    /// Nothing servable: missing, outside the root, not a regular file, too large, unreadable.
    case notFound
    /// A regular file inside the root; `body` is nil when the caller did not want it read.
    case found(StaticFileInfo, servedName: String, body: [UInt8]?)
}

/// The blocking half of static file serving: `realpath`, `open`, `fstat`, `pread`.
/// Every function here blocks and must run on `StaticFiles`' dispatch queue,
/// never on Swift's cooperative pool.
///
/// Containment: the path is resolved with `realpath` (all symlinks followed) and
/// must equal the root or lie below it, compared byte for byte; the result is then
/// opened with `O_NOFOLLOW`. A process that can rename files inside the root while
/// we serve could race that check; the root is the operator's own directory, so
/// that is outside the threat model (Linux `openat2(RESOLVE_BENEATH)` would close it).
enum StaticFileLoader {
    /// Larger files are not served (`404`): bodies are read whole into memory.
    static let maxFileBytes = 16 * 1024 * 1024

    /// Looks up `path` (decoded, relative to `root`, "" for the root itself).
    /// A directory answers with its `index.html`; `wantsDirectory` refuses plain files.
    /// `readBody` sees the file's validators and says whether its bytes are needed.
    static func load(root: String, path: StaticPath, readBody: (StaticFileInfo) -> Bool) -> StaticFileLoad {
        let requested = path.segments.isEmpty ? root : root + "/" + path.relative
        guard let opened = openInside(root: root, path: requested) else { return .notFound }
        if opened.kind == S_IFDIR {
            closeIgnoringErrors(opened.fd)
            // The index may itself be a symlink: resolve and check it like any request.
            guard let index = openInside(root: root, path: opened.resolved + "/index.html") else { return .notFound }
            defer { closeIgnoringErrors(index.fd) }
            guard index.kind == S_IFREG else { return .notFound }
            return read(index, servedName: "index.html", readBody: readBody)
        }
        defer { closeIgnoringErrors(opened.fd) }
        guard opened.kind == S_IFREG, !path.wantsDirectory else { return .notFound }
        return read(opened, servedName: path.segments.last ?? "", readBody: readBody)
    }

    private struct Opened {
        var fd: Int32
        var resolved: String
        var kind: mode_t
        var info: StaticFileInfo
    }

    /// Resolves `path`, checks it stays inside `root`, opens it and `fstat`s the descriptor
    /// (so what we check is what we read). The caller owns and closes `fd`.
    private static func openInside(root: String, path: String) -> Opened? {
        guard let resolvedPointer = realpath(path, nil) else { return nil }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        guard isInside(resolved, root: root) else { return nil }

        // O_NONBLOCK: opening a FIFO or device someone left in the root must not hang.
        var fd: Int32
        repeat {
            fd = open(resolved, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { return nil }

        var status = stat()
        guard fstat(fd, &status) == 0 else {
            closeIgnoringErrors(fd)
            return nil
        }
        let info = StaticFileInfo(size: Int(status.st_size),
                                  modifiedSeconds: Int(status.st_mtim.tv_sec),
                                  modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
        return Opened(fd: fd, resolved: resolved, kind: status.st_mode & S_IFMT, info: info)
    }

    /// Whether `resolved` is `root` or below it. Bytes, not `String` comparison:
    /// Unicode-equivalent spellings are different paths to the kernel.
    static func isInside(_ resolved: String, root: String) -> Bool {
        if resolved.utf8.elementsEqual(root.utf8) { return true }
        let prefix = root.utf8.last == UInt8(ascii: "/") ? root : root + "/"
        return resolved.utf8.starts(with: prefix.utf8)
    }

    private static func read(_ file: Opened, servedName: String,
                             readBody: (StaticFileInfo) -> Bool) -> StaticFileLoad {
        guard file.info.size <= maxFileBytes else { return .notFound }
        guard readBody(file.info) else { return .found(file.info, servedName: servedName, body: nil) }
        guard let body = readAll(fd: file.fd, size: file.info.size) else { return .notFound }
        return .found(file.info, servedName: servedName, body: body)
    }

    /// Reads up to `size` bytes from offset 0. A file that shrank meanwhile gives
    /// fewer bytes (the response's `Content-Length` follows the bytes actually read).
    private static func readAll(fd: Int32, size: Int) -> [UInt8]? {
        var failed = false
        let body = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let n = pread(fd, buffer.baseAddress! + count, size - count, off_t(count))
                if n > 0 {
                    count += n
                } else if n == 0 {
                    break
                } else if errno != EINTR {
                    failed = true
                    break
                }
            }
        }
        return failed ? nil : body
    }

    /// `close` is never retried: on Linux the descriptor is gone even after `EINTR`.
    private static func closeIgnoringErrors(_ fd: Int32) {
        if fd >= 0 { _ = close(fd) }
    }
}
