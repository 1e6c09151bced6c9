import Foundation
import GatewayAPI
import Glibc
import HTTPCore
@testable import SSEGateway

/// A throwaway tree: `base/public` is the served root, `base/outside` is not.
struct StaticFilesFixture {
    let base: String
    let root: String
    let files: StaticFiles

    init() throws {
        base = NSTemporaryDirectory() + "static-files-\(UUID().uuidString)"
        root = base + "/public"
        let fm = FileManager.default
        for dir in ["public/sub", "public/empty-dir", "outside"] {
            try fm.createDirectory(atPath: base + "/" + dir, withIntermediateDirectories: true)
        }
        try Self.write(base, "public/index.html", "<!doctype html><h1>streams</h1>\n")
        try Self.write(base, "public/app.js", "console.log(1)\n")
        try Self.write(base, "public/style.css", "body{}\n")
        try Self.write(base, "public/data.json", "{}\n")
        try Self.write(base, "public/blob.bin", "\u{1}\u{2}")
        try Self.write(base, "public/hello world.txt", "spaces\n")
        try Self.write(base, "public/.env", "SECRET=1\n")
        try Self.write(base, "public/sub/index.html", "<p>sub</p>\n")
        try Self.write(base, "public/sub/notes.txt", "line one\nline two\n")
        try Self.write(base, "outside/secret.txt", "secret\n")
        try fm.createSymbolicLink(atPath: root + "/inside-link.txt", withDestinationPath: "sub/notes.txt")
        try fm.createSymbolicLink(atPath: root + "/outside-link.txt", withDestinationPath: "../outside/secret.txt")
        try fm.createSymbolicLink(atPath: root + "/outdir", withDestinationPath: "../outside")
        try fm.createSymbolicLink(atPath: root + "/escape", withDestinationPath: "/")
        files = StaticFiles(root: root)
    }

    static func write(_ base: String, _ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: base + "/" + path))
    }

    func write(_ path: String, _ text: String) throws { try Self.write(base, path, text) }

    func get(_ path: String, _ headers: HTTPHeaders = [:]) async -> Served {
        await respond("GET", path, headers)
    }

    func respond(_ method: String, _ path: String, _ headers: HTTPHeaders = [:]) async -> Served {
        await served(files, method, path, headers)
    }

    func remove() { try? FileManager.default.removeItem(atPath: base) }
}

/// The answer as the gateway sends it: the files' reply under the response
/// policy, without a body for `HEAD` (as the server writes it).
func served(_ files: StaticFiles, _ method: String, _ path: String,
                    _ headers: HTTPHeaders = [:]) async -> Served {
    let response = ResponsePolicy(corsOrigin: "*").finish(
        await files.respond(method: method, rawPath: path, requestHeaders: headers))
    guard case .bytes(let body) = response.body, method != "HEAD" else {
        return Served(status: response.head.status, headers: response.head.headers, body: [])
    }
    return Served(status: response.head.status, headers: response.head.headers, body: body)
}

/// A fixed response as the tests read it.
struct Served {
    var status: HTTPStatus
    var headers: HTTPHeaders
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
}
