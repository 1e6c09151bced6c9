/// The `Content-Type` of a served file, chosen by its extension alone (the
/// response also says `X-Content-Type-Options: nosniff`, so browsers trust it).
/// Text types carry `charset=utf-8`; anything unknown is `application/octet-stream`,
/// which browsers download rather than render.
enum ContentTypes {
    static let fallback = "application/octet-stream"

    /// The type for a file name such as `app.js` (the extension is matched case-insensitively).
    static func forFileName(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        switch name[name.index(after: dot)...].lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "json", "map": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        default: return fallback
        }
    }
}
