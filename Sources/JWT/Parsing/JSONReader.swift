/// A strict JSON reader (RFC 8259) for token headers and claims.
///
/// Promises: accepts exactly RFC 8259's grammar — no comments, no trailing
/// commas, no leading zeros, no `NaN`, only the four whitespace bytes — and
/// refuses on top of it: an object with a key twice (RFC 7515 §4 and
/// RFC 7519 §4 ask for that, and Foundation's parser keeps the last one
/// silently), text that is not UTF-8, an unpaired surrogate escape, a number
/// too large for a `Double`, more than `limits.maximumBytes` bytes or
/// `limits.maximumDepth` levels of nesting. Never traps and uses stack only in
/// proportion to the depth limit.
public struct JSONReader {
    private let bytes: [UInt8]
    private let limits: JSONLimits
    private var index = 0

    /// Reads `bytes` as exactly one JSON value (whitespace around it allowed).
    public static func parse(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONValue {
        guard bytes.count <= limits.maximumBytes else {
            throw JSONError(offset: limits.maximumBytes, problem: "longer than \(limits.maximumBytes) bytes")
        }
        var reader = JSONReader(bytes: bytes, limits: limits)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("end of text") }
        return value
    }

    /// Reads `bytes` as one JSON object, the shape of a token's header and claims.
    public static func parseObject(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONObject {
        guard case .object(let object) = try parse(bytes, limits: limits) else {
            throw JSONError(offset: 0, problem: "an object")
        }
        return object
    }

    private init(bytes: [UInt8], limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    private func error(_ expected: String) -> JSONError {
        JSONError(offset: index, problem: expected)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(JSONError) {
        for byte in literal.utf8 {
            guard current == byte else { throw error("'\(literal)'") }
            index += 1
        }
    }

    private mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard let byte = current else { throw error("a value") }
        switch byte {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("a value")
        }
    }

    private mutating func object(depth: Int) throws(JSONError) -> JSONObject {
        guard depth <= limits.maximumDepth else { throw error("nesting within \(limits.maximumDepth) levels") }
        index += 1  // {
        var members: [JSONObject.Member] = []
        // Claims sets have a handful of members: a linear search beats hashing
        // them; a large object switches to a set.
        var keys: Set<String> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return JSONObject(members: members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("a member name") }
            let keyOffset = index
            let key = try string()
            let repeated: Bool
            if members.count < 16 {
                repeated = members.contains { $0.key == key }
            } else {
                if keys.isEmpty { keys = Set(members.map(\.key)) }
                repeated = !keys.insert(key).inserted
            }
            guard !repeated else {
                throw JSONError(offset: keyOffset, problem: "a member name not used before in the object")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("':'") }
            index += 1
            skipWhitespace()
            members.append(JSONObject.Member(key: key, value: try value(depth: depth)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return JSONObject(members: members)
            default: throw error("',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(JSONError) -> [JSONValue] {
        guard depth <= limits.maximumDepth else { throw error("nesting within \(limits.maximumDepth) levels") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return elements
            default: throw error("',' or ']'")
            }
        }
    }

    private mutating func string() throws(JSONError) -> String {
        let start = index
        index += 1  // "
        // Most strings have no escape: validate them in place, without a copy.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let text = bytes.withUnsafeBufferPointer { all in
                String(validating: UnsafeBufferPointer(rebasing: all[index..<end]), as: UTF8.self)
            }
            guard let text else { throw JSONError(offset: start, problem: "a string of UTF-8 text") }
            index = end + 1
            return text
        }
        var out: [UInt8] = []
        while true {
            guard let byte = current else { throw error("a closing '\"'") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: out, as: UTF8.self) else {
                    throw JSONError(offset: start, problem: "a string of UTF-8 text")
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0x00..<0x20:
                throw JSONError(offset: index - 1, problem: "no control character in a string")
            default:
                out.append(byte)
            }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(JSONError) {
        guard let byte = current else { throw error("an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a low surrogate escape after a high one")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("a low surrogate escape after a high one") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("no unpaired low surrogate")
            }
            // Not a surrogate (or a pair joined above): always a valid scalar.
            out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            throw JSONError(offset: index - 1, problem: "one of the escapes \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u")
        }
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("four hex digits") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite as a `Double`.
    private mutating func number() throws(JSONError) -> Double {
        let start = index
        func digits(_ reader: inout JSONReader) -> Int {
            let from = reader.index
            while let byte = reader.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { reader.index += 1 }
            return reader.index - from
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw error("a digit")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw error("a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw error("a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONError(offset: start, problem: "a number within the range of a Double")
        }
        return value
    }
}
