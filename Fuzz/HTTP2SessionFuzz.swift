@testable import HTTPCore

/// libFuzzer target `http2`: the HTTP/2 input path, the bytes a client sends after the
/// connection preface as the server's nghttp2 session (`HTTP2SessionCore`) receives them.
///
/// Input: byte 0 picks small limits (bit 7), how many cut points follow (bits 0-2, two
/// bytes each) and whether requests are answered with a pumped body (bit 3); the rest
/// follows the preface, as a client sent it.
///
/// Oracles, beyond "never traps, never hangs" (libFuzzer's `-timeout`):
/// - every request handed on obeys the limits (target, body) and has a path-form target;
/// - the open-streams gauge always equals the streams the session holds, and is back to
///   its start once the session ends; every source is cancelled at most once;
/// - a session that abuse broke answers with a GOAWAY frame last, and then nothing more.
@_cdecl("LLVMFuzzerTestOneInput")
public func http2SessionFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    var limits = HTTPLimits()
    if control & 0x80 != 0 {
        limits.maxHeaderBytes = 300
        limits.maxURIBytes = 40
        limits.maxBodyBytes = 20
    }
    var settings = HTTP2Settings()
    settings.maxConcurrentStreams = 4
    settings.resetBurst = 5
    settings.controlBurst = 5
    let pumped = control & 0x08 != 0
    let cuts = input.cuts(count: Int(control & 7))
    let payload = HTTP2Preface.bytes + input.rest()

    let counters = HTTP2Counters()
    let core = HTTP2SessionCore(limits: limits, settings: settings, counters: counters)
    fuzzCheck(core.start(), "the session did not start", input: payload)
    var sources: [FuzzSource] = []
    var goAwaySent = false
    for piece in pieces(payload, at: cuts) {
        core.receive(piece)
        let events = core.events
        core.events.removeAll()
        for work in core.takeClosedWork() { work() }
        for event in events {
            switch event {
            case .request(let id, let request):
                let head = request.head
                fuzzCheck(request.body.count <= limits.maxBodyBytes, "body over the limit", input: payload)
                fuzzCheck(head.target.utf8.count <= limits.maxURIBytes, "target over the limit", input: payload)
                fuzzCheck(head.target.hasPrefix("/") || head.target == "*", "target not in path form", input: payload)
                if pumped {
                    let source = FuzzSource()
                    sources.append(source)
                    if !core.respond(id, status: 200, fields: [("content-type", "text/event-stream")],
                                     body: .source(prelude: Array("retry: 1\n\n".utf8), source)) {
                        source.cancel()
                    }
                } else {
                    _ = core.respond(id, status: 200, fields: [("content-length", "2")], body: .bytes(Array("ok".utf8)))
                }
            case .refuse(let id, let status, _):
                _ = core.respond(id, status: status.code, fields: [], body: .none)
            }
        }
        for (id, source) in core.takeNeedsTake() {
            core.deliver(source.take(orNotify: {}), to: id)
        }
        let out = core.produce()
        for work in core.takeClosedWork() { work() }
        fuzzCheck(!goAwaySent || out.isEmpty, "frames after the GOAWAY of a broken session", input: payload)
        if core.broken, let last = out.last, last.count == 17, last[3] == 0x7 { goAwaySent = true }
        fuzzCheck(counters.streams.load(ordering: .relaxed) == core.streams.count,
                  "streams gauge \(counters.streams.load(ordering: .relaxed)) != \(core.streams.count)", input: payload)
    }
    for work in core.end() { work() }
    fuzzCheck(counters.streams.load(ordering: .relaxed) == 0, "streams gauge not back to 0", input: payload)
    for source in sources { fuzzCheck(source.cancels <= 1, "a source cancelled twice", input: payload) }
    return 0
}

/// A pumped body's source: two batches, then finished; counts its cancels.
final class FuzzSource: StreamSource, @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the fuzz target is single-threaded.
    var taken = 0
    var cancels = 0

    func take(orNotify ready: @escaping @Sendable () -> Void) -> StreamTake {
        taken += 1
        switch taken {
        case 1, 2: return .batch(StreamBatch(chunks: [Array("data: x\n\n".utf8), Array(repeating: 0x61, count: 70)],
                                             frames: 1, values: 1, oldestValueAt: nil))
        case 3: return .pending
        default: return .finished
        }
    }

    func written(_ batch: StreamBatch, at time: ContinuousClock.Instant) {}

    func cancel() { cancels += 1 }
}
