/// Base64url without padding (RFC 7515 §2, RFC 4648 §5), read strictly.
///
/// Promises: `decode` accepts exactly the canonical encodings — only
/// `A-Z a-z 0-9 - _`, no `=`, no whitespace, no length that leaves one lone
/// character (length % 4 == 1), and zero bits in whatever a final partial group
/// leaves unused — so every byte string has exactly one accepted spelling and
/// `encode(decode(text)!) == text`. Never traps, whatever the input.
public enum Base64URL {
    /// The bytes `text` encodes, or nil when it is not a canonical encoding.
    public static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        text.withUnsafeBufferPointer(decode)
    }

    /// The bytes `text` encodes, or nil when it is not a canonical encoding.
    public static func decode(_ text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBufferPointer(decode)
    }

    /// One concrete loop over the bytes (a generic one was not specialized
    /// and cost more than the HMAC it guards).
    private static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = text.count
        if count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        for character in text {
            let value = sextets[Int(character)]
            guard value != invalid else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> bits))
                accumulator &= (1 << bits) - 1
            }
        }
        // 2 or 4 bits left over from a partial group must be zero: otherwise two
        // spellings (`QQ` and `QR`) would decode to the same byte.
        return accumulator == 0 ? out : nil
    }

    /// The unpadded base64url text of `bytes`.
    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                out.append(alphabet[Int(accumulator >> UInt32(bits) & 0x3F)])
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { out.append(alphabet[Int(accumulator << UInt32(6 - bits) & 0x3F)]) }
        return String(decoding: out, as: UTF8.self)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let invalid: UInt8 = 0xFF

    /// The value of each byte as a base64url digit, `invalid` for the rest.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
