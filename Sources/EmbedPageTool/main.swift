import Foundation

// EmbedPageTool OUTPUT ROOT FILE...: writes a Swift source declaring
// `EmbeddedPage.files`, one entry per FILE (a path below ROOT): its path relative
// to ROOT, its modification time (for ETag and Last-Modified) and its bytes as
// base64 (one string literal a file: compiles fast whatever the bytes).
// Run by the EmbedPage build-tool plugin; only Foundation.
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: EmbedPageTool OUTPUT ROOT FILE...\n".utf8))
    exit(2)
}
let output = arguments[1]
let root = URL(fileURLWithPath: arguments[2]).standardizedFileURL.path
var entries: [String] = []
for path in arguments.dropFirst(3) {
    let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
    guard absolute.hasPrefix(root + "/") else {
        FileHandle.standardError.write(Data("EmbedPageTool: \(path) is not below \(root)\n".utf8))
        exit(1)
    }
    let relative = String(absolute.dropFirst(root.count + 1))
    let bytes = try Data(contentsOf: URL(fileURLWithPath: absolute))
    var status = stat()
    guard stat(absolute, &status) == 0 else {
        FileHandle.standardError.write(Data("EmbedPageTool: cannot stat \(absolute)\n".utf8))
        exit(1)
    }
    // Names are plain page files (letters, digits, '.', '-', '_', '/'): quote them safely anyway.
    let name = relative.unicodeScalars.map { scalar -> String in
        scalar == "\"" || scalar == "\\" ? "\\" + String(scalar) : String(scalar)
    }.joined()
    entries.append("""
            EmbeddedPageFile(path: "\(name)", modifiedSeconds: \(status.st_mtim.tv_sec), \
        modifiedNanoseconds: \(status.st_mtim.tv_nsec), base64: "\(bytes.base64EncodedString())"),
        """)
}
let source = """
    // Generated at build time by the EmbedPage plugin from public/. Do not edit.

    /// The browser page as it was in `public/` when the executable was built.
    enum EmbeddedPage {
        static let files: [EmbeddedPageFile] = [
    \(entries.joined(separator: "\n"))
        ]
    }

    """
do {
    // Rewritten only when different, so an unchanged page does not recompile the target.
    if (try? String(contentsOfFile: output, encoding: .utf8)) != source {
        try source.write(toFile: output, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("EmbedPageTool: cannot write \(output): \(error)\n".utf8))
    exit(1)
}
