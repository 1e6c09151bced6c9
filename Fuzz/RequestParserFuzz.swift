@testable import HTTPCore

/// libFuzzer target `request`: the incremental HTTP/1.1 request parser.
///
/// Input: byte 0 picks the limits (bits 3-7) and how many cut points follow (bits 0-2,
/// two bytes each); the rest is what a client sent.
///
/// Oracles, beyond "never traps, never hangs" (libFuzzer's `-timeout`):
/// - the same requests and the same refusal (status and reason) whether the bytes arrive
///   whole, cut at the fuzzer's points, or one byte at a time; and the same answer to
///   "bytes still buffered?" at the end;
/// - a refused parser repeats its refusal;
/// - every `.head` is for a request with a body and is followed by that request;
/// - every accepted request obeys the limits and the grammar, and its canonical
///   re-serialization parses back to the same request (nothing malformed slips through).
@_cdecl("LLVMFuzzerTestOneInput")
public func requestParserFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let limits = fuzzLimits(scale: Int(control >> 3))
    let cuts = input.cuts(count: Int(control & 7))
    let payload = input.rest()

    let whole = FuzzParse(pieces: [payload], limits: limits)
    for (name, other) in [("cut", FuzzParse(pieces: pieces(payload, at: cuts), limits: limits)),
                          ("bytewise", FuzzParse(pieces: bytewise(payload), limits: limits))] {
        fuzzCheck(other.requests == whole.requests, "\(name) requests differ from whole", input: payload)
        fuzzCheck(other.error == whole.error,
                  "\(name) refusal \(String(describing: other.error)) != whole \(String(describing: whole.error))",
                  input: payload)
        fuzzCheck(whole.error != nil || other.isMidRequest == whole.isMidRequest,
                  "\(name) isMidRequest differs", input: payload)
        checkEvents(other, input: payload)
    }
    checkEvents(whole, input: payload)
    for request in whole.requests {
        checkGrammar(request, limits: limits, input: payload)
        checkRoundTrip(request, input: payload)
    }
    return 0
}

/// Default limits for scale 0, else small ones that the fuzzer's short inputs can pass.
func fuzzLimits(scale: Int) -> HTTPLimits {
    var limits = HTTPLimits()
    guard scale > 0 else { return limits }
    limits.maxHeaderBytes = 24 + 8 * scale
    limits.maxURIBytes = 4 * scale
    limits.maxBodyBytes = 3 * scale
    return limits
}

/// A parser fed `pieces` one at a time, drained after each, stopping at the first refusal.
struct FuzzParse {
    var events: [HTTPParserEvent] = []
    var error: HTTPParseError?
    var isMidRequest = false

    var requests: [HTTPRequest] {
        events.compactMap { if case .request(let request) = $0 { request } else { nil } }
    }

    init(pieces: [[UInt8]], limits: HTTPLimits) {
        var parser = HTTPRequestParser(limits: limits)
        for piece in pieces where error == nil {
            parser.append(piece)
            do {
                while let event = try parser.next() { events.append(event) }
            } catch {
                self.error = error
                // Dead after a refusal: every later call repeats it, whatever arrives.
                parser.append(piece)
                do {
                    _ = try parser.next()
                    fuzzCheck(false, "next() after a refusal returned", input: piece)
                } catch let again {
                    fuzzCheck(again == error, "next() after a refusal threw \(again), not \(error)", input: piece)
                }
            }
        }
        isMidRequest = parser.isMidRequest
    }
}

/// A `.head` only for a body still arriving, and the request it announces comes next.
func checkEvents(_ parse: FuzzParse, input: [UInt8]) {
    var announced: HTTPRequestHead?
    for event in parse.events {
        switch event {
        case .head(let head):
            fuzzCheck(announced == nil, "two heads without a request between", input: input)
            switch head.bodyFraming {
            case .none, .contentLength(0): fuzzCheck(false, "head event for a bodyless request", input: input)
            default: break
            }
            announced = head
        case .request(let request):
            if let head = announced {
                fuzzCheck(request.head == head, "request differs from its announced head", input: input)
            }
            announced = nil
        }
    }
}

/// What the parser promises about anything it accepts.
func checkGrammar(_ request: HTTPRequest, limits: HTTPLimits, input: [UInt8]) {
    let head = request.head
    fuzzCheck(!head.method.isEmpty && head.method.utf8.allSatisfy(HTTPSyntax.isTokenChar), "bad method", input: input)
    fuzzCheck(!head.target.isEmpty && head.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "bad target", input: input)
    fuzzCheck(head.target.utf8.count <= limits.maxURIBytes, "target over the limit", input: input)
    if head.target.hasPrefix("/") {
        fuzzCheck(head.target == head.rawPath + (head.query.map { "?" + $0 } ?? ""), "target split wrongly", input: input)
        fuzzCheck(!head.rawPath.contains("?"), "path holds a ?", input: input)
    }
    var headBytes = head.method.utf8.count + head.target.utf8.count + 11  // 2 SP, version, LF
    /// Raw bytes a value took at least: obs-text that is not UTF-8 became U+FFFD (3 bytes)
    /// for as little as 1 byte.
    func rawBytes(_ value: String) -> Int {
        value.utf8.count - 2 * value.unicodeScalars.filter { $0 == "\u{FFFD}" }.count
    }
    for (name, value) in head.headers {
        fuzzCheck(!name.isEmpty && name.utf8.allSatisfy(HTTPSyntax.isTokenChar), "bad field name", input: input)
        fuzzCheck(value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }, "bad field value", input: input)
        fuzzCheck(value.utf8.first.map { !HTTPSyntax.isWhitespace($0) } ?? true
                  && value.utf8.last.map { !HTTPSyntax.isWhitespace($0) } ?? true, "untrimmed value", input: input)
        headBytes += name.utf8.count + 2 + rawBytes(value)
    }
    fuzzCheck(headBytes + 1 <= limits.maxHeaderBytes, "head over the limit", input: input)
    fuzzCheck(request.body.count <= limits.maxBodyBytes, "body over the limit", input: input)
    switch head.bodyFraming {
    case .none:
        fuzzCheck(request.body.isEmpty, "body without framing", input: input)
    case .contentLength(let length):
        fuzzCheck(request.body.count == length, "body length differs from Content-Length", input: input)
    case .chunked:
        fuzzCheck(head.version == .http11, "chunked in HTTP/1.0", input: input)
        fuzzCheck(!head.headers.contains("Content-Length"), "chunked with Content-Length", input: input)
    }
}

/// The request written canonically (CRLF lines, one chunk for a chunked body) parses back
/// to itself: what the parser accepted is a well-formed request, not an artefact of splitting.
func checkRoundTrip(_ request: HTTPRequest, input: [UInt8]) {
    let head = request.head
    var wire = Array("\(head.method) \(head.target) \(head.version.text)\r\n".utf8)
    for (name, value) in head.headers {
        wire += Array(name.utf8) + Array(": ".utf8) + Array(value.utf8) + [0x0D, 0x0A]
    }
    wire += [0x0D, 0x0A]
    if case .chunked = head.bodyFraming {
        if !request.body.isEmpty {
            wire += ChunkedEncoding.chunkHeader(size: request.body.count) + request.body + ChunkedEncoding.chunkEnd
        }
        wire += ChunkedEncoding.lastChunk
    } else {
        wire += request.body
    }
    var roomy = HTTPLimits()
    roomy.maxHeaderBytes = 1 << 20
    roomy.maxURIBytes = 1 << 20
    roomy.maxBodyBytes = 1 << 20
    let again = FuzzParse(pieces: [wire], limits: roomy)
    fuzzCheck(again.error == nil && again.requests == [request] && !again.isMidRequest,
              "canonical form \(String(decoding: wire, as: UTF8.self).debugDescription) does not parse back: "
                  + "\(String(describing: again.error))", input: input)
}
