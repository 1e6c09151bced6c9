import HTTPCore

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
        if opened.kind == .directory {
            FileSystem.close(opened.fd)
            // The index may itself be a symlink: resolve and check it like any request.
            guard let index = openInside(root: root, path: opened.resolved + "/index.html") else { return .notFound }
            defer { FileSystem.close(index.fd) }
            guard index.kind == .regular else { return .notFound }
            return read(index, servedName: "index.html", readBody: readBody)
        }
        defer { FileSystem.close(opened.fd) }
        guard opened.kind == .regular, !path.wantsDirectory else { return .notFound }
        return read(opened, servedName: path.segments.last ?? "", readBody: readBody)
    }

    private struct Opened {
        var fd: Int32
        var resolved: String
        var kind: FileSystem.Status.Kind
        var info: StaticFileInfo
    }

    /// Resolves `path`, checks it stays inside `root`, opens it and `fstat`s the descriptor
    /// (so what we check is what we read). The caller owns and closes `fd`.
    private static func openInside(root: String, path: String) -> Opened? {
        guard let resolved = FileSystem.realPath(path), isInside(resolved, root: root) else { return nil }
        guard let fd = FileSystem.openForReading(resolved) else { return nil }
        guard let status = FileSystem.status(fd) else {
            FileSystem.close(fd)
            return nil
        }
        let info = StaticFileInfo(size: status.size, modifiedSeconds: status.modifiedSeconds,
                                  modifiedNanoseconds: status.modifiedNanoseconds)
        return Opened(fd: fd, resolved: resolved, kind: status.kind, info: info)
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
        guard let body = FileSystem.read(file.fd, size: file.info.size) else { return .notFound }
        return .found(file.info, servedName: servedName, body: body)
    }
}
