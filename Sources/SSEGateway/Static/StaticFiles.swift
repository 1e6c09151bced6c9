import Dispatch
import GatewayAPI
import HTTPCore

/// Serves files of one directory, refusing every path that leaves it, or the
/// page built into the executable (`EmbeddedPageFiles`) with the same answers.
///
/// - `/` and any directory answer with that directory's `index.html` (or `404`).
/// - Refused with `404` (see `StaticPath`, `StaticFileLoader`): `.`/`..` segments in
///   any encoding, encoded `/` or NUL, malformed escapes, hidden (dot) files,
///   anything whose `realpath` leaves the root (symlinks inside are fine),
///   non-regular files, and files over 16 MiB (bodies are read whole).
/// - Every `200`/`304` carries `ETag`, `Last-Modified`, `Cache-Control: no-cache`
///   (browsers revalidate each time, so a redeploy shows at once) and
///   `X-Content-Type-Options: nosniff`.
///
/// Blocking file calls run on one concurrent dispatch queue, never on Swift's
/// cooperative pool. Reads are short and bounded, so they are not cancelled.
struct StaticFiles: Sendable {
    /// The root's `realpath`, resolved once; nil when the root does not exist (all `404`)
    /// or when the embedded page is served.
    let root: String?
    /// The page compiled in, served when no directory is given.
    private let embedded: EmbeddedPageFiles?
    /// Where the blocking `realpath`/`open`/`fstat`/`pread` calls run.
    private let queue: DispatchQueue

    /// Resolves `root` with `realpath` once (blocking: call at startup).
    init(root: String) {
        self.root = FileSystem.realPath(root)
        embedded = nil
        queue = DispatchQueue(label: "streams.static-files", attributes: .concurrent)
    }

    /// Serves the page compiled into the executable.
    init(embedded: EmbeddedPageFiles) {
        root = nil
        self.embedded = embedded
        queue = DispatchQueue(label: "streams.static-files", attributes: .concurrent)
    }

    /// Answers a `GET` or `HEAD` of `rawPath` (the path still percent-encoded, without the query).
    /// A `200` to `HEAD` carries the file's `Content-Length` and no body.
    func respond(method: String, rawPath: String, requestHeaders: HTTPHeaders) async -> Reply {
        let isHead = method == "HEAD"
        guard let path = StaticPath(rawPath: rawPath) else { return Self.notFound }

        let conditions = ConditionalRequest(headers: requestHeaders)
        let load: StaticFileLoad
        if let embedded {
            guard let (file, servedName) = embedded.lookUp(path) else { return Self.notFound }
            let wanted = !isHead && !conditions.isNotModified(file.info)
            load = .found(file.info, servedName: servedName, body: wanted ? file.body : nil)
        } else {
            guard let root else { return Self.notFound }
            load = await onQueue {
                StaticFileLoader.load(root: root, path: path) { info in
                    !isHead && !conditions.isNotModified(info)
                }
            }
        }
        guard case let .found(info, servedName, body) = load else { return Self.notFound }

        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: info.etag)
        headers.add(name: "Last-Modified", value: info.lastModified)
        headers.add(name: "Cache-Control", value: "no-cache")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if conditions.isNotModified(info) {
            return .response(HTTPResponse(status: .notModified, headers: headers))
        }
        headers.add(name: "Content-Type", value: ContentTypes.forFileName(servedName))
        headers.add(name: "Content-Length", value: String(body?.count ?? info.size))
        return .response(HTTPResponse(status: .ok, headers: headers, body: body ?? []))
    }

    /// Runs blocking work on the file queue and resumes the caller with its result.
    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    /// Every refused path, whatever the reason (the reason is not told: it would map the tree).
    /// Made at each use, not kept in a global: `Reply` keeps its case in spare bits of a
    /// pointer inside it, and LeakSanitizer, not seeing that pointer in a global, reported
    /// the headers it points to as leaked.
    private static var notFound: Reply { .refused(.notFound, "not found", headers: [
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
    ]) }
}
