/// One HTTP/2 stream as its connection's session sees it: the request as it
/// arrives (pseudo-headers, fields, body within the limits), then the response
/// body waiting for nghttp2 to take it as flow control allows. Owned by the
/// session core and touched only under its lock.
final class HTTP2StreamState {
    let id: Int32
    // The request.
    var method: String?
    var path: String?
    var authority: String?
    var headers = HTTPHeaders()
    /// Header bytes decoded so far (name + value + 32 per field, as RFC 9113 counts).
    var headerBytes = 0
    var body: [UInt8] = []
    /// The body passed `maxBodyBytes`: the rest is discarded, the answer is `413`.
    var bodyTooLarge = false
    /// The request was handed to the handler (or refused); later frames are ignored.
    var dispatched = false
    /// When the request last made progress (its headers, a piece of its body): a request
    /// still arriving must keep moving within the body timeout, as on HTTP/1.1.
    var lastProgress = ContinuousClock.now
    /// The request's header block is complete (its HEADERS and CONTINUATIONs arrived).
    var headersDone = false

    // The response body, as nghttp2's data provider reads it.
    /// Bytes not yet framed, in order; `pendingIndex`/`pendingOffset` mark the next byte.
    var pending: [[UInt8]] = []
    var pendingIndex = 0
    var pendingOffset = 0
    var pendingBytes = 0
    /// Batches whose bytes are in `pending`, with the bytes of each not framed yet.
    var batches: [(left: Int, batch: StreamBatch)] = []
    /// Where a pumped body comes from (SSE); nil for a fixed body.
    var source: (any StreamSource)?
    /// The source was asked and said `.pending`: it will call back.
    var awaitingSource = false
    /// No more bytes after `pending` (the source finished, or the body is fixed).
    var bodyEnds = false
    /// Run once when the stream closes (the client reset it, the connection ended).
    var onClose: [@Sendable () -> Void] = []
    var closed = false

    init(id: Int32) {
        self.id = id
    }

    /// Appends bytes to send, as one batch (nil batch: not reported to the source).
    func append(_ chunks: [[UInt8]], batch: StreamBatch?) {
        var size = 0
        for chunk in chunks where !chunk.isEmpty {
            pending.append(chunk)
            size += chunk.count
        }
        pendingBytes += size
        if let batch, size > 0 { batches.append((size, batch)) }
    }

    /// Takes `count` framed bytes off the front: whole chunks as they are (shared,
    /// not copied), a chunk cut by a frame boundary as a copy of its part. Returns
    /// the bytes and the batches now fully taken.
    func take(_ count: Int, into out: inout [[UInt8]]) -> [StreamBatch] {
        var left = count
        while left > 0 {
            let chunk = pending[pendingIndex]
            let available = chunk.count - pendingOffset
            if pendingOffset == 0 && available <= left {
                out.append(chunk)
            } else {
                let end = pendingOffset + min(available, left)
                out.append(Array(chunk[pendingOffset..<end]))
            }
            let taken = min(available, left)
            left -= taken
            pendingOffset += taken
            if pendingOffset == chunk.count {
                pendingIndex += 1
                pendingOffset = 0
            }
        }
        pendingBytes -= count
        if pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
        }
        var done: [StreamBatch] = []
        var consumed = count
        while consumed > 0, !batches.isEmpty {
            let used = min(consumed, batches[0].left)
            batches[0].left -= used
            consumed -= used
            if batches[0].left == 0 { done.append(batches.removeFirst().batch) }
        }
        return done
    }
}
