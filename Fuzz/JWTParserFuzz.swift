/// libFuzzer target `jwt`: everything of a token that is read before (and after) its
/// signature is checked — strict base64url, the JSON reader, the compact split and
/// header, the claims, and topic patterns.
///
/// Input: byte 0 picks what the rest is (modulo 3):
///   0 — a whole token (`header.payload.signature`), also decoded as base64url;
///   1 — JSON text, read as a value, as claims, and as the header and payload of a
///       token built around it;
///   2 — `pattern \n topic`, matched as a `sse` pattern against a topic name.
///
/// Oracles, beyond "never traps, never hangs": base64url agrees exactly with a
/// reference decoder written from RFC 4648 §5 and RFC 7515 §2 (unpadded, canonical), and
/// what it accepts re-encodes to the same text; an accepted token has exactly two dots
/// and three canonical parts and a string `alg`; an accepted JSON text printed back and
/// read again gives the same value, and no object in it holds a key twice; pattern
/// matching agrees with a reference written from API.md ("Tokens (JWT)").
import JWT

@_cdecl("LLVMFuzzerTestOneInput")
public func jwtFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte() % 3
    let rest = input.rest()
    switch mode {
    case 0: checkToken(rest)
    case 1: checkJSON(rest)
    default: checkPattern(rest)
    }
    return 0
}

private func checkToken(_ text: [UInt8]) {
    let decoded = Base64URL.decode(text)
    fuzzCheck(decoded == referenceBase64URL(text), "base64url differs from the reference", input: text)
    if let decoded {
        fuzzCheck(Array(Base64URL.encode(decoded).utf8) == text, "base64url does not re-encode to itself", input: text)
    }
    guard case .success(let token) = CompactToken.parse(text) else { return }
    let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    fuzzCheck(parts.count == 3 && text.count <= CompactToken.maximumBytes, "accepted a token of \(parts.count) parts", input: text)
    for part in parts {
        fuzzCheck(referenceBase64URL(Array(part)) != nil, "accepted a non-canonical part", input: text)
    }
    fuzzCheck(token.header["alg"] == .string(token.algorithm), "alg is not the header's string", input: text)
    fuzzCheck(Array(token.signingInput) == Array(text[..<(parts[0].count + 1 + parts[1].count)]), "signing input", input: text)
    if case .success(let claims) = TokenClaims.read(token.payload) {
        checkClaims(claims, input: text)
    }
}

private func checkJSON(_ text: [UInt8]) {
    if let value = try? JSONReader.parse(text) {
        let printed = Array(printJSON(value).utf8)
        fuzzCheck((try? JSONReader.parse(printed)) == value, "printed JSON does not read back the same", input: text)
        fuzzCheck(hasNoDuplicateKeys(value), "an object holds a key twice", input: text)
    }
    if case .success(let claims) = TokenClaims.read(text) {
        checkClaims(claims, input: text)
    }
    // The same text as the header and the payload of a token.
    let part = Base64URL.encode(text)
    _ = CompactToken.parse(Array((part + "." + part + ".c2ln").utf8))
}

private func checkPattern(_ text: [UInt8]) {
    let halves = text.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false)
    let patternText = String(decoding: halves[0], as: UTF8.self)
    let topic = String(decoding: halves.count > 1 ? Array(halves[1]) : [], as: UTF8.self)
    let pattern = TopicPattern(patternText)
    let reference = referencePattern(patternText)
    fuzzCheck((pattern != nil) == (reference != nil), "pattern validity differs from the reference", input: text)
    if let pattern, let reference {
        fuzzCheck(pattern.matches(topic) == reference(topic), "pattern match differs from the reference", input: text)
        fuzzCheck(TopicPattern(pattern.text) == pattern, "pattern text does not read back", input: text)
    }
}

private func checkClaims(_ claims: TokenClaims, input: [UInt8]) {
    for pattern in claims.grants.subscribe + claims.grants.publish {
        fuzzCheck(TopicPattern(pattern.text) == pattern, "a granted pattern does not read back", input: input)
    }
    fuzzCheck(claims.expiresAt?.isFinite ?? true, "exp is not finite", input: input)
}

/// RFC 4648 §5 without padding: 4 characters → 3 bytes; a final 2 or 3 characters → 1 or
/// 2 bytes whose unused low bits must be zero (RFC 7515 §2 asks for the canonical form).
func referenceBase64URL(_ text: [UInt8]) -> [UInt8]? {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    var values: [UInt32] = []
    for character in text {
        guard let index = alphabet.firstIndex(of: character) else { return nil }
        values.append(UInt32(index))
    }
    var out: [UInt8] = []
    var i = 0
    while i + 4 <= values.count {
        let group = values[i] << 18 | values[i + 1] << 12 | values[i + 2] << 6 | values[i + 3]
        out += [UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
        i += 4
    }
    switch values.count - i {
    case 0: return out
    case 2:
        guard values[i + 1] & 0x0F == 0 else { return nil }
        return out + [UInt8(values[i] << 2 | values[i + 1] >> 4)]
    case 3:
        guard values[i + 2] & 0x03 == 0 else { return nil }
        let group = values[i] << 10 | values[i + 1] << 4 | values[i + 2] >> 2
        return out + [UInt8(group >> 8), UInt8(group & 0xFF)]
    default: return nil
    }
}

/// API.md: "a pattern is an exact topic name, `<prefix>/*` (every topic under `<prefix>/`,
/// at any depth), or `*` (every topic)"; a star anywhere else is no pattern.
func referencePattern(_ pattern: String) -> ((String) -> Bool)? {
    if pattern == "*" { return { _ in true } }
    if pattern.hasSuffix("/*") {
        let prefix = String(pattern.dropLast(2))
        guard !prefix.isEmpty, !prefix.contains("*") else { return nil }
        return { topic in
            let bytes = Array(topic.utf8), head = Array((prefix + "/").utf8)
            return bytes.count > head.count && Array(bytes.prefix(head.count)) == head
        }
    }
    guard !pattern.isEmpty, !pattern.contains("*") else { return nil }
    return { topic in Array(topic.utf8) == Array(pattern.utf8) }
}

/// JSON text of a value: strings escaped where RFC 8259 requires, numbers in Swift's
/// shortest round-tripping form.
func printJSON(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let flag): return flag ? "true" : "false"
    case .number(let number): return "\(number)"
    case .string(let text): return printString(text)
    case .array(let elements): return "[" + elements.map(printJSON).joined(separator: ",") + "]"
    case .object(let object):
        return "{" + object.members.map { printString($0.key) + ":" + printJSON($0.value) }.joined(separator: ",") + "}"
    }
}

private func printString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

private func hasNoDuplicateKeys(_ value: JSONValue) -> Bool {
    switch value {
    case .array(let elements): return elements.allSatisfy(hasNoDuplicateKeys)
    case .object(let object):
        return Set(object.members.map(\.key)).count == object.members.count
            && object.members.allSatisfy { hasNoDuplicateKeys($0.value) }
    default: return true
    }
}
