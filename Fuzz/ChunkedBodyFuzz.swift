@testable import HTTPCore

/// libFuzzer target `chunked`: the `Transfer-Encoding: chunked` body decoder.
///
/// Input: byte 0 picks the limits (bits 3-7) and how many cut points follow (bits 0-2,
/// two bytes each); byte 1 picks how the round trip writes its chunks; the rest is the
/// payload.
///
/// Oracles, beyond "never traps, never hangs":
/// - decoding the payload as a chunked body gives the same body, completion, consumed
///   count and refusal whole, cut at the fuzzer's points, or one byte at a time;
/// - the request parser, given the payload after a chunked request head, agrees with the
///   decoder (same body, or same refusal, or still waiting);
/// - the payload written as chunks at the fuzzer's cut points (in one of several legal
///   spellings) decodes back to the payload, or is refused with 413 past the body limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func chunkedBodyFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let spelling = input.byte()
    let limits = chunkedLimits(scale: Int(control >> 3))
    let cuts = input.cuts(count: Int(control & 7))
    let payload = input.rest()

    let whole = Decoded(pieces: [payload], limits: limits)
    for (name, other) in [("cut", Decoded(pieces: pieces(payload, at: cuts), limits: limits)),
                          ("bytewise", Decoded(pieces: bytewise(payload), limits: limits))] {
        fuzzCheck(other == whole, "\(name) decoding \(other) differs from whole \(whole)", input: payload)
    }
    checkAgainstParser(payload, decoded: whole, limits: limits)
    checkRoundTrip(payload, cuts: cuts, spelling: spelling, limits: limits)
    return 0
}

/// Default limits for scale 0, else a small body and trailer limit.
func chunkedLimits(scale: Int) -> HTTPLimits {
    var limits = HTTPLimits()
    guard scale > 0 else { return limits }
    limits.maxBodyBytes = 4 * scale
    limits.maxHeaderBytes = 8 * scale
    return limits
}

/// A decoder driven the way the parser drives it: unconsumed bytes are offered again
/// with the next piece; stops at completion or refusal.
struct Decoded: Equatable, CustomStringConvertible {
    var body: [UInt8] = []
    var done = false
    var consumed = 0
    var error: HTTPParseError?

    init(pieces: [[UInt8]], limits: HTTPLimits) {
        var decoder = ChunkedBodyDecoder(limits: limits)
        var pending: [UInt8] = []
        for piece in pieces where !done && error == nil {
            pending += piece
            do {
                let result = try pending.withUnsafeBufferPointer { bytes throws(HTTPParseError) in
                    try decoder.decode(UnsafeRawBufferPointer(bytes), into: &body)
                }
                fuzzCheck(result.consumed <= pending.count, "consumed more than offered", input: pending)
                pending.removeFirst(result.consumed)
                consumed += result.consumed
                done = result.done
            } catch {
                // A refused body is dropped whole: what was decoded before is meaningless.
                self = Decoded(error: error)
            }
        }
    }

    private init(error: HTTPParseError) { self.error = error }

    var description: String { "(body \(body.count) bytes, done \(done), consumed \(consumed), error \(String(describing: error)))" }
}

/// The parser, given a chunked request head then `payload`, agrees with the decoder.
func checkAgainstParser(_ payload: [UInt8], decoded: Decoded, limits: HTTPLimits) {
    var roomy = limits
    roomy.maxHeaderBytes = max(limits.maxHeaderBytes, 1024)  // the head below must fit
    var parser = HTTPRequestParser(limits: roomy)
    parser.append(Array("POST /c HTTP/1.1\r\nHost: f\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + payload)
    let decodedWithRoomyLimits = roomy == limits ? decoded : Decoded(pieces: [payload], limits: roomy)
    do {
        let first = try parser.next()
        if decodedWithRoomyLimits.done {
            guard case .request(let request) = first else {
                return fuzzCheck(false, "parser did not complete a body the decoder completed", input: payload)
            }
            fuzzCheck(request.body == decodedWithRoomyLimits.body, "parser body differs from decoder body", input: payload)
        } else {
            fuzzCheck(decodedWithRoomyLimits.error == nil, "parser accepted what the decoder refused", input: payload)
            guard case .head = first else {
                return fuzzCheck(false, "parser did not wait for the rest of the body", input: payload)
            }
            fuzzCheck(try parser.next() == nil, "parser produced a request from an unfinished body", input: payload)
        }
    } catch {
        fuzzCheck(error == decodedWithRoomyLimits.error, "parser refused with \(error), decoder with "
                  + "\(String(describing: decodedWithRoomyLimits.error))", input: payload)
    }
}

/// `payload` written as chunks (cut at `cuts`) in the spelling `spelling` picks decodes
/// back to `payload`: bit 0 uppercase hex, bit 1 leading zeros, bit 2 extensions with
/// BWS, bit 3 bare LF line ends, bit 4 a trailer field.
func checkRoundTrip(_ payload: [UInt8], cuts: [Int], spelling: UInt8, limits: HTTPLimits) {
    let eol: [UInt8] = spelling & 8 != 0 ? [0x0A] : [0x0D, 0x0A]
    func sizeLine(_ size: Int) -> [UInt8] {
        var hex = String(size, radix: 16, uppercase: spelling & 1 != 0)
        if spelling & 2 != 0 { hex = "00" + hex }
        let ext = spelling & 4 != 0 ? " ;name=\"quoted value\";x" : ""
        return Array((hex + ext).utf8) + eol
    }
    var wire: [UInt8] = []
    for chunk in pieces(payload, at: cuts) where !chunk.isEmpty {
        wire += sizeLine(chunk.count) + chunk + eol
    }
    wire += sizeLine(0)
    let trailers = (spelling & 16 != 0 ? Array("X-Trailer: done".utf8) + eol : []) + eol
    wire += trailers
    let decoded = Decoded(pieces: [wire], limits: limits)
    if payload.count > limits.maxBodyBytes {
        fuzzCheck(decoded.error?.status == .contentTooLarge, "oversized body not refused with 413: \(decoded)", input: payload)
    } else if trailers.count > limits.maxHeaderBytes {
        fuzzCheck(decoded.error?.status == .headersTooLarge, "oversized trailers not refused with 431: \(decoded)", input: payload)
    } else {
        fuzzCheck(decoded.error == nil && decoded.done && decoded.body == payload && decoded.consumed == wire.count,
                  "round trip failed: \(decoded)", input: payload)
    }
}
