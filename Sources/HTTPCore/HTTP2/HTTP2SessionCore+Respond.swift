import CNghttp2

/// The core's side of answering: a response head and body submitted to nghttp2,
/// and a pumped body's batches appended as its source hands them over.
extension HTTP2SessionCore {
    /// A response body as HTTP/2 sends it.
    enum Body {
        /// Headers only (`END_STREAM` on them).
        case none
        case bytes([UInt8])
        /// A pumped body (SSE): `prelude` first, then the source's batches.
        case source(prelude: [UInt8], any StreamSource)
    }

    /// Submits the response; false when the stream is gone (the client reset it).
    func respond(_ id: Int32, status: Int, fields: [(name: String, value: String)], body: Body) -> Bool {
        guard let session, !broken, let stream = streams[id], !stream.closed else { return false }
        switch body {
        case .none:
            stream.bodyEnds = true
        case .bytes(let bytes):
            stream.append([bytes], batch: nil)
            stream.bodyEnds = true
        case .source(let prelude, let source):
            stream.append([prelude], batch: nil)
            stream.source = source
            needsTake.insert(id)
        }
        // One buffer of every name and value; the name/value list points into it.
        var text: [UInt8] = Array(":status".utf8) + Array(String(status).utf8)
        var spans: [(Int, Int, Int, Int)] = [(0, 7, 7, text.count - 7)]
        for field in fields {
            let nameStart = text.count
            text += field.name.lowercased().utf8
            let valueStart = text.count
            text += field.value.utf8
            spans.append((nameStart, valueStart - nameStart, valueStart, text.count - valueStart))
        }
        let result = text.withUnsafeBufferPointer { buffer -> Int32 in
            let base = buffer.baseAddress!
            var list = spans.map { cnghttp2_nv(base + $0.0, $0.1, base + $0.2, $0.3) }
            if case .none = body {
                return nghttp2_submit_response(session, id, &list, list.count, nil)
            }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: HTTP2Callbacks.read)
            return nghttp2_submit_response(session, id, &list, list.count, &provider)
        }
        return result == 0
    }

    /// The streams whose sources should be asked for more now, with them.
    func takeNeedsTake() -> [(Int32, any StreamSource)] {
        guard !needsTake.isEmpty else { return [] }
        var asks: [(Int32, any StreamSource)] = []
        for id in needsTake {
            guard let stream = streams[id], let source = stream.source, !stream.bodyEnds else { continue }
            stream.awaitingSource = false
            asks.append((id, source))
        }
        needsTake.removeAll(keepingCapacity: true)
        return asks
    }

    /// What a source's `take` gave for stream `id`.
    func deliver(_ take: StreamTake, to id: Int32) {
        guard let session, !broken, let stream = streams[id], !stream.closed, !stream.bodyEnds else { return }
        switch take {
        case .batch(let batch):
            stream.append(batch.chunks, batch: batch)
        case .pending:
            stream.awaitingSource = true
            return
        case .finished:
            stream.bodyEnds = true
        }
        nghttp2_session_resume_data(session, id)
    }

    /// The source of stream `id` has something (its `ready`).
    func sourceReady(_ id: Int32) {
        guard let stream = streams[id], !stream.closed else { return }
        stream.awaitingSource = false
        needsTake.insert(id)
    }

    /// Ends a pumped body with `END_STREAM` after what is pending (a token's expiry):
    /// the source is let go of; false when there was none.
    func endBody(_ id: Int32) -> (any StreamSource)? {
        guard let session, !broken, let stream = streams[id], !stream.bodyEnds else { return nil }
        stream.bodyEnds = true
        let source = stream.source
        nghttp2_session_resume_data(session, id)
        return source
    }

    /// Runs `handler` when stream `id` closes (at once, outside the lock, if it has).
    func onClose(_ id: Int32, _ handler: @escaping @Sendable () -> Void) -> Bool {
        guard let stream = streams[id], !stream.closed else { return false }
        stream.onClose.append(handler)
        return true
    }

    /// Work queued by closes (sources to cancel, close handlers), to run outside the lock.
    func takeClosedWork() -> [@Sendable () -> Void] {
        defer { closedWork.removeAll() }
        return closedWork
    }
}
