import HTTPCore

/// Where a request carries its token (API.md, "Tokens (JWT)"), in this order:
/// `Authorization: Bearer <jwt>`, the query parameter `access_token`
/// (EventSource cannot send headers), the cookie `sse_token`.
///
/// Promises: the first place that holds a token wins, whether or not that
/// token turns out valid (a bad header token is not rescued by a good cookie);
/// a place that is absent or empty (`Authorization: Basic …`,
/// `?access_token=`) is passed over. The query value is percent-decoded once,
/// as every query value is; the cookie value is taken as sent (RFC 6265, an
/// optional pair of double quotes removed).
public enum RequestToken {
    public static let queryParameter = "access_token"
    public static let cookieName = "sse_token"

    /// The token `head` carries, or nil when it carries none.
    public static func find(in head: HTTPRequestHead) -> String? {
        if let token = bearer(head.headers["Authorization"]) { return token }
        if let query = head.query, let token = fromQuery(query) { return token }
        return fromCookies(head.headers.values(for: "Cookie"))
    }

    /// The credentials of `Bearer <token>` (the scheme in any letter case,
    /// RFC 6750 §2.1), or nil for another scheme or an empty token.
    public static func bearer(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1,
              zip(bytes, scheme).allSatisfy({ ($0 | 0x20) == $1 }),
              bytes[scheme.count] == UInt8(ascii: " ") else { return nil }
        let token = bytes.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") }
        return token.isEmpty ? nil : String(decoding: token, as: UTF8.self)
    }

    /// The first non-empty `access_token` value of `query`, decoded.
    static func fromQuery(_ query: String) -> String? {
        guard query.utf8.count >= queryParameter.utf8.count else { return nil }
        return PercentDecoding.queryItems(query)?.first { $0.name == queryParameter && !$0.value.isEmpty }?.value
    }

    /// The first non-empty `sse_token` cookie of the `Cookie` fields.
    static func fromCookies(_ fields: [String]) -> String? {
        for field in fields {
            for pair in field.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " || $0 == "\t" }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == cookieName else { continue }
                var value = trimmed[trimmed.index(after: equals)...]
                while value.last == " " || value.last == "\t" { value = value.dropLast() }
                if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
                if !value.isEmpty { return String(value) }
            }
        }
        return nil
    }

    /// `target` with the value of every `access_token` query parameter replaced
    /// by `…`, for the access log: tokens never appear in logs.
    public static func redacted(_ target: String) -> String {
        guard let question = target.firstIndex(of: "?") else { return target }
        let query = target[target.index(after: question)...]
        guard query.contains("=") else { return target }
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> Substring in
            let name = part.prefix { $0 != "=" }
            // The name as `fromQuery` reads it (decoded), so `access%5Ftoken` is caught too.
            let decoded = PercentDecoding.decode(name.replacingOccurrences(of: "+", with: " "))
                .map { String(decoding: $0, as: UTF8.self) }
            return decoded == queryParameter ? Substring(name + "=…") : part
        }
        return target[...question] + parts.joined(separator: "&")
    }
}
