/// Durations on the command line: `500ms`, `30s`, `2m`, `1h`, or a plain
/// number of seconds (`1.5`). Negative, empty and non-finite values are refused.
enum DurationText {
    static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = factor
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite, value >= 0, value * scale <= 86_400 * 365 else { return nil }
        return .nanoseconds(Int64((value * scale * 1e9).rounded()))
    }

    /// Seconds as a `Double`, for reports.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The rules of API.md for a topic name, applied to the prefix (which leaves
/// room for `/<index>`): segments of `A-Z a-z 0-9 . _ ~ -`, not `.` or `..`.
enum TopicPrefix {
    static func isValid(_ prefix: String) -> Bool {
        let bytes = Array(prefix.utf8)
        guard (1...180).contains(bytes.count) else { return false }
        let segments = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return segments.allSatisfy { segment in
            !segment.isEmpty && segment.elementsEqual(".".utf8) == false && segment.elementsEqual("..".utf8) == false
                && segment.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                         UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                         UInt8(ascii: "~"), UInt8(ascii: "-"): true
                    default: false
                    }
                }
        }
    }
}

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

extension DurationText {
    /// A duration as `--help` and reports show it: `500ms`, `30s`, `1.5s`.
    static func text(_ duration: Duration) -> String {
        let seconds = seconds(duration)
        if seconds < 1 && seconds > 0 { return "\(Int((seconds * 1000).rounded()))ms" }
        if seconds == seconds.rounded() { return "\(Int(seconds))s" }
        return "\(seconds)s"
    }
}
