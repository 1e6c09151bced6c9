/// The one place that percent-decodes (RFC 3986 §2.1). Path and query parsing elsewhere
/// must go through it, so every caller agrees on what `%2F` or a malformed escape means.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (either hex case) into bytes; nil on a malformed escape
    /// (`%`, `%4`, `%zz`). Does NOT turn `+` into a space: that is a query convention.
    public static func decode<S: StringProtocol>(_ s: S) -> [UInt8]? {
        decode(s.utf8, plusIsSpace: false)
    }

    /// Parses `a=1&b=x%20y` into ordered pairs, decoding both sides (`+` is a space here),
    /// or the values only with `decodingNames` false (a name is then as written: `%74opic`
    /// is not `topic`, though its escapes must still be well formed).
    /// Empty parts (`a=1&&b=2`) are skipped; a part without `=` has an empty value.
    /// Nil on a malformed escape or on a name or value that does not decode to valid UTF-8.
    public static func queryItems(_ query: String, decodingNames: Bool = true) -> [(name: String, value: String)]? {
        var items: [(name: String, value: String)] = []
        for part in query.utf8.split(separator: 0x26, omittingEmptySubsequences: true) {  // "&"
            let name: Substring.UTF8View.SubSequence
            let value: Substring.UTF8View.SubSequence
            if let equals = part.firstIndex(of: 0x3D) {  // "="
                name = part[..<equals]
                value = part[part.index(after: equals)...]
            } else {
                name = part
                value = part[part.endIndex...]
            }
            guard let nameBytes = decode(name, plusIsSpace: true),
                  let valueBytes = decode(value, plusIsSpace: true),
                  let nameText = String(validating: nameBytes, as: UTF8.self),
                  let valueText = String(validating: valueBytes, as: UTF8.self) else { return nil }
            items.append((name: decodingNames ? nameText : String(Substring(name)), value: valueText))
        }
        return items
    }

    private static func decode<C: Collection<UInt8>>(_ text: C, plusIsSpace: Bool) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case 0x25:  // "%"
                guard let high = iterator.next().flatMap(HTTPSyntax.hexValue),
                      let low = iterator.next().flatMap(HTTPSyntax.hexValue) else { return nil }
                out.append(high << 4 | low)
            case 0x2B where plusIsSpace:  // "+"
                out.append(HTTPSyntax.space)
            default:
                out.append(byte)
            }
        }
        return out
    }
}
