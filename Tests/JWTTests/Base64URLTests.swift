import Testing
@testable import JWT

struct Base64URLTests {
    private func decode(_ text: String) -> [UInt8]? { Base64URL.decode(Array(text.utf8)) }

    /// The RFC 4648 test vectors decode, unpadded, and encode back to the same text.
    @Test func vectors() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(decode(encoded) == Array(plain.utf8))
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        }
    }

    /// `-` and `_` are the two last digits; `+` and `/` (plain base64) are refused.
    @Test func urlAlphabet() {
        #expect(decode("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(decode("+/+/") == nil)
    }

    /// Padding, whitespace and any byte outside the alphabet are refused.
    @Test func noPaddingNoWhitespace() {
        for text in ["Zg==", "Zg=", "Zm9v\n", " Zm9v", "Zm 9v", "Zm9v.", "Zm9\u{0}v", "Zm9é"] {
            #expect(decode(text) == nil, "\(text.debugDescription)")
        }
    }

    /// A length that leaves one lone character is refused.
    @Test func loneCharacter() {
        #expect(decode("Z") == nil)
        #expect(decode("Zm9vY") == nil)
    }

    /// Non-zero unused bits in the last character are refused, so each byte string has one spelling.
    @Test func canonicalOnly() {
        #expect(decode("QQ") == [0x41])
        #expect(decode("QR") == nil)
        #expect(decode("QUE") == [0x41, 0x41])
        #expect(decode("QUF") == nil)
    }

    /// Every byte string of up to 3 bytes round-trips (each byte value at each position).
    @Test func roundTrip() {
        for length in 1...3 {
            for value in 0...255 {
                let bytes = [UInt8](repeating: UInt8(value), count: length)
                #expect(decode(Base64URL.encode(bytes)) == bytes)
            }
        }
    }
}
