import Foundation

/// One file of the page compiled into the executable (see the EmbedPage plugin,
/// which generates `EmbeddedPage.files` from `public/` at build time).
struct EmbeddedPageFile: Sendable {
    /// The path below `public/`, e.g. `js/app.js`.
    let path: String
    /// The file's modification time when built: its ETag and Last-Modified.
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int
    /// The bytes, base64 (as generated).
    let base64: String
}

/// The embedded page ready to serve: bytes decoded once, looked up by path.
///
/// Promises the same answers as a directory holding the same files: `""` and a
/// directory path answer with that directory's `index.html`; anything else
/// not embedded is not found.
struct EmbeddedPageFiles: Sendable {
    struct File: Sendable {
        let info: StaticFileInfo
        let body: [UInt8]
    }

    private let files: [String: File]

    init(_ embedded: [EmbeddedPageFile]) {
        var files: [String: File] = [:]
        for file in embedded {
            let body = Data(base64Encoded: file.base64).map { [UInt8]($0) } ?? []
            files[file.path] = File(info: StaticFileInfo(size: body.count, modifiedSeconds: file.modifiedSeconds,
                                                         modifiedNanoseconds: file.modifiedNanoseconds),
                                    body: body)
        }
        self.files = files
    }

    /// The page built into this executable.
    static let page = EmbeddedPageFiles(EmbeddedPage.files)

    /// How many files are embedded (for the start line).
    var count: Int { files.count }

    /// The file `path` names, and the name it is served as (for its content type).
    func lookUp(_ path: StaticPath) -> (File, servedName: String)? {
        let relative = path.relative
        if !path.wantsDirectory, let file = files[relative] {
            return (file, path.segments.last ?? "")
        }
        let index = relative.isEmpty ? "index.html" : relative + "/index.html"
        return files[index].map { ($0, "index.html") }
    }
}
