import Testing
@testable import HTTPCore

/// Mutated (mostly malformed) inputs: whatever the parser decides must not depend on how the
/// bytes were split, and it must never trap.
struct ParserMutationTests {
    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Generator {
        var state: UInt64
        mutating func below(_ n: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(n))
        }
    }

    static let seeds = [
        "POST /events/chat?event=msg HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;a=b\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\nGET /n HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nPOST /b HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc",
        "\r\nGET /x?y=1 HTTP/1.1\nHost: t\nA: b\n\n",
    ]
    static let alphabet = bytes(" \r\n\t:;,0123456789abcdefABCDEF/?%*-HTTP\u{0}\u{7F}")

    /// 2,000 random mutations of valid requests give the same requests and the same refusal whole and in random pieces.
    @Test func mutatedInputsAgreeWholeAndSplit() {
        var g = Generator(state: 0x9E37_79B9_7F4A_7C15)
        let tight = limits(header: 120, uri: 30, body: 40)
        var refusals = Set<Int>()
        for _ in 0..<2_000 {
            var input = bytes(Self.seeds[g.below(Self.seeds.count)])
            for _ in 0...g.below(4) {
                let k = g.below(input.count)
                switch g.below(4) {
                case 0: input[k] = Self.alphabet[g.below(Self.alphabet.count)]
                case 1: input.insert(Self.alphabet[g.below(Self.alphabet.count)], at: k)
                case 2: input.remove(at: k)
                default: input.insert(contentsOf: [UInt8](repeating: input[k], count: g.below(40)), at: k)
                }
                if input.isEmpty { input = bytes("G") }
            }
            var pieces: [[UInt8]] = []
            var at = 0
            while at < input.count {
                let end = min(input.count, at + 1 + g.below(7))
                pieces.append(Array(input[at..<end]))
                at = end
            }
            let whole = feed([input], limits: tight)
            let split = feed(pieces, limits: tight)
            #expect(whole.requests == split.requests, "\(String(decoding: input, as: UTF8.self).debugDescription)")
            #expect(whole.error == split.error, "\(String(decoding: input, as: UTF8.self).debugDescription)")
            if let status = whole.error?.status.code { refusals.insert(status) }
        }
        #expect(refusals == [400, 413, 414, 431, 505])
    }
}
