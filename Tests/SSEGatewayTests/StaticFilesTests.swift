import Foundation
import GatewayAPI
import Glibc
import HTTPCore
import Testing
@testable import SSEGateway

struct StaticFilesTests {
    /// `GET /` serves the root's index.html as UTF-8 HTML.
    @Test func rootServesIndex() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let response = await fx.get("/")
        #expect(response.status == .ok)
        #expect(response.text == "<!doctype html><h1>streams</h1>\n")
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["Content-Length"] == String(response.body.count))
    }

    /// A directory, with or without a trailing slash, serves its own index.html; one without an index is 404.
    @Test func directoriesServeTheirIndex() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        #expect(await fx.get("/sub/").text == "<p>sub</p>\n")
        #expect(await fx.get("/sub").text == "<p>sub</p>\n")
        #expect(await fx.get("/index.html").status == .ok)
        #expect(await fx.get("/empty-dir/").status == .notFound)
        #expect(await fx.get("/sub/notes.txt/").status == .notFound)
        #expect(await fx.get("/missing.html").status == .notFound)
    }

    /// Each file is labelled with the content type of its extension, text types in UTF-8.
    @Test(arguments: [
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/data.json", "application/json"),
        ("/sub/notes.txt", "text/plain; charset=utf-8"),
        ("/blob.bin", "application/octet-stream"),
    ])
    func contentTypes(path: String, type: String) async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let response = await fx.get(path)
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == type)
    }

    /// Extensions map to types case-insensitively and unknown ones fall back to octet-stream.
    @Test func contentTypeTable() {
        #expect(ContentTypes.forFileName("a.HTML") == "text/html; charset=utf-8")
        #expect(ContentTypes.forFileName("x.svg") == "image/svg+xml")
        #expect(ContentTypes.forFileName("x.png") == "image/png")
        #expect(ContentTypes.forFileName("x.jpeg") == "image/jpeg")
        #expect(ContentTypes.forFileName("x.jpg") == "image/jpeg")
        #expect(ContentTypes.forFileName("favicon.ico") == "image/x-icon")
        #expect(ContentTypes.forFileName("app.js.map") == "application/json")
        #expect(ContentTypes.forFileName("f.woff2") == "font/woff2")
        #expect(ContentTypes.forFileName("site.webmanifest") == "application/manifest+json")
        #expect(ContentTypes.forFileName("README") == "application/octet-stream")
        #expect(ContentTypes.forFileName("archive.tar.gz") == "application/octet-stream")
    }

    /// Percent-encoded file names are decoded before lookup.
    @Test func encodedNamesAreDecoded() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        #expect(await fx.get("/hello%20world.txt").text == "spaces\n")
        #expect(await fx.get("/%61pp.js").status == .ok)
    }

    /// A symlink that stays inside the root is served like the file it points to.
    @Test func symlinkInsideIsServed() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let response = await fx.get("/inside-link.txt")
        #expect(response.status == .ok)
        #expect(response.text == "line one\nline two\n")
    }

    /// Symlinks that lead out of the root, to a file or a directory, are 404.
    @Test(arguments: ["/outside-link.txt", "/outdir/secret.txt", "/outdir/", "/escape/etc/passwd", "/escape/"])
    func symlinkOutsideIsRefused(path: String) async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let response = await fx.get(path)
        #expect(response.status == .notFound)
        #expect(response.text == "not found\n")
    }

    /// Paths that try to leave the root or smuggle separators are 404 with a one-line body.
    @Test(arguments: [
        "..", "/..", "/../", "/%2e%2e", "/%2E%2e", "/%2e%2E/", "/.%2e/outside/secret.txt",
        "/../outside/secret.txt", "/%2e%2e/outside/secret.txt", "/sub/../../outside/secret.txt",
        "/sub/%2e%2e/%2e%2e/outside/secret.txt", "/a/../../x", "/sub/../index.html",
        "/./index.html", "/%2e/index.html", "/sub/.",
        "/%2f", "/sub%2fnotes.txt", "/sub%2Fnotes.txt", "/%2foutside%2fsecret.txt",
        "/%00", "/index.html%00", "/index.html%00.txt",
        "/%", "/%2", "/%zz", "/%g0", "//index.html", "/sub//notes.txt", "", "index.html",
        "/.env", "/%2eenv", "/%0a", "/%ff",
    ])
    func traversalIsRefused(path: String) async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let response = await fx.get(path)
        #expect(response.status == .notFound)
        #expect(response.text == "not found\n")
        #expect(response.headers["Content-Type"] == "text/plain; charset=utf-8")
    }

    /// HEAD answers with GET's headers, the file's Content-Length and no body.
    @Test func headHasHeadersAndNoBody() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let get = await fx.get("/sub/notes.txt")
        let head = await fx.respond("HEAD", "/sub/notes.txt", [:])
        #expect(head.status == .ok)
        #expect(head.body.isEmpty)
        #expect(head.headers == get.headers)
        #expect(head.headers["Content-Length"] == "18")
        let missing = await fx.respond("HEAD", "/nope", [:])
        #expect(missing.status == .notFound)
        #expect(missing.body.isEmpty)
    }

    /// Responses carry a quoted ETag, an IMF-fixdate Last-Modified, no-cache and nosniff.
    @Test func cachingAndSafetyHeaders() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let response = await fx.get("/app.js")
        let etag = try #require(response.headers["ETag"])
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 2)
        let lastModified = try #require(response.headers["Last-Modified"])
        #expect(HTTPDate.parse(lastModified) != nil)
        #expect(lastModified.hasSuffix(" GMT"))
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
    }

    /// A matching If-None-Match (exact, weak, in a list, or `*`) revalidates to 304 with no body.
    @Test func etagRevalidation() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let etag = try #require(await fx.get("/app.js").headers["ETag"])
        for candidate in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
            let response = await fx.get("/app.js", ["If-None-Match": candidate])
            #expect(response.status == .notModified, "If-None-Match: \(candidate)")
            #expect(response.body.isEmpty)
            #expect(response.headers["ETag"] == etag)
            #expect(response.headers["Content-Length"] == nil)
        }
        let head = await fx.respond("HEAD", "/app.js", ["If-None-Match": etag])
        #expect(head.status == .notModified)
        let other = await fx.get("/app.js", ["If-None-Match": "\"stale\""])
        #expect(other.status == .ok)
        #expect(other.text == "console.log(1)\n")
    }

    /// Rewriting a file changes its ETag, so the old one no longer revalidates.
    @Test func rewrittenFileGetsNewETag() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let old = try #require(await fx.get("/app.js").headers["ETag"])
        try fx.write("public/app.js", "console.log('changed')\n")
        let response = await fx.get("/app.js", ["If-None-Match": old])
        #expect(response.status == .ok)
        #expect(response.headers["ETag"] != old)
        #expect(response.text == "console.log('changed')\n")
    }

    /// If-Modified-Since at or after the file's time gives 304; an older or unreadable date gives the file.
    @Test func ifModifiedSince() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        let mtime = 1_700_000_000
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(mtime))],
                                              ofItemAtPath: fx.root + "/style.css")
        let first = await fx.get("/style.css")
        #expect(first.headers["Last-Modified"] == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(await fx.get("/style.css", ["If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"]).status == .notModified)
        #expect(await fx.get("/style.css", ["If-Modified-Since": HTTPDate.format(mtime + 60)]).status == .notModified)
        #expect(await fx.get("/style.css", ["If-Modified-Since": HTTPDate.format(mtime - 1)]).status == .ok)
        #expect(await fx.get("/style.css", ["If-Modified-Since": "yesterday"]).status == .ok)
        // If-None-Match wins over If-Modified-Since.
        let both: HTTPHeaders = ["If-None-Match": "\"stale\"", "If-Modified-Since": HTTPDate.format(mtime)]
        #expect(await fx.get("/style.css", both).status == .ok)
    }

    /// HTTP dates are written as IMF-fixdate and read in all three RFC 9110 forms.
    @Test func httpDates() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        for seconds in [0, 86_399, 951_782_400, 1_700_000_000, 4_102_444_800] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
        for bad in ["", "yesterday", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    /// A FIFO in the root is 404 at once instead of hanging the request.
    @Test func fifoIsNotServedAndDoesNotHang() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        #expect(mkfifo(fx.root + "/pipe", 0o644) == 0)
        #expect(await fx.get("/pipe").status == .notFound)
    }

    /// Files over 16 MiB are 404; a file of exactly 16 MiB is served whole.
    @Test func largeFilesAreRefused() async throws {
        let fx = try StaticFilesFixture()
        defer { fx.remove() }
        try fx.write("public/big.bin", "")
        try fx.write("public/max.bin", "")
        #expect(truncate(fx.root + "/big.bin", off_t(StaticFileLoader.maxFileBytes + 1)) == 0)
        #expect(truncate(fx.root + "/max.bin", off_t(StaticFileLoader.maxFileBytes)) == 0)
        #expect(await fx.get("/big.bin").status == .notFound)
        let max = await fx.get("/max.bin")
        #expect(max.status == .ok)
        #expect(max.body.count == StaticFileLoader.maxFileBytes)
    }

    /// The shipped browser page (public/index.html, app.js, style.css) is served with its types.
    @Test func shippedPageIsServed() async throws {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let files = StaticFiles(root: packageRoot.appendingPathComponent("public").path)
        let page = await served(files, "GET", "/")
        #expect(page.status == .ok)
        #expect(String(decoding: page.body, as: UTF8.self).contains("<script src=\"app.js\""))
        for (path, type) in [("/app.js", "text/javascript; charset=utf-8"), ("/style.css", "text/css; charset=utf-8")] {
            let response = await served(files, "GET", path)
            #expect(response.status == .ok, "\(path)")
            #expect(response.headers["Content-Type"] == type)
        }
    }

    /// A root that does not exist answers 404 to everything.
    @Test func missingRootIsNotFound() async {
        let files = StaticFiles(root: "/nonexistent-\(UUID().uuidString)")
        #expect(files.root == nil)
        #expect(await served(files, "GET", "/").status == .notFound)
    }

    /// Containment compares whole path components, so a sibling sharing the root's prefix is outside.
    @Test func containmentIsByComponent() {
        #expect(StaticFileLoader.isInside("/srv/public", root: "/srv/public"))
        #expect(StaticFileLoader.isInside("/srv/public/a.js", root: "/srv/public"))
        #expect(!StaticFileLoader.isInside("/srv/public-old/a.js", root: "/srv/public"))
        #expect(!StaticFileLoader.isInside("/srv", root: "/srv/public"))
        #expect(StaticFileLoader.isInside("/etc/passwd", root: "/"))
    }
}
