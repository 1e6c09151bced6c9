/// `--url`: `http://host[:port][/base]`. `https://` is refused until TLS lands
/// in HTTPCore; anything with a query, fragment or user part is refused too.
enum LoadURL {
    static func parse(_ text: String, flag: String) throws(LoadUsageError) -> LoadTarget {
        let lowered = text.lowercased()
        if lowered.hasPrefix("https://") {
            throw LoadUsageError(message: "\(flag) '\(text)': https:// is not supported yet "
                + "(TLS lands later, with --cacert); use http://")
        }
        guard lowered.hasPrefix("http://") else {
            throw LoadUsageError(message: "\(flag) must be an http:// URL, not '\(text)'")
        }
        let rest = text.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        var path = String(rest.dropFirst(authority.count))
        guard !authority.isEmpty, !authority.contains("@"), !path.contains("?"), !path.contains("#") else {
            throw LoadUsageError(message: "\(flag) must look like http://host[:port][/path], not '\(text)'")
        }
        while path.hasSuffix("/") { path.removeLast() }
        var host = Substring(authority)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw LoadUsageError(message: "\(flag) has an unclosed '[' in '\(text)'")
            }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw LoadUsageError(message: "\(flag) must look like http://[v6-address]:port, not '\(text)'")
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.firstIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        var port = 80
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw LoadUsageError(message: "\(flag) has a bad port in '\(text)'")
            }
            port = value
        }
        guard !host.isEmpty else { throw LoadUsageError(message: "\(flag) has no host in '\(text)'") }
        return LoadTarget(host: String(host), port: port, basePath: path)
    }
}
