import CNghttp2

/// nghttp2's session callbacks, as C function pointers over the session's user
/// data (the `HTTP2SessionCore`). They run inside the core's calls into nghttp2,
/// under its owner's lock, and only record: requests and closes become the core's
/// events and work, abuse sets `abuse` and fails the call (the session ends with a
/// GOAWAY for that reason).
enum HTTP2Callbacks {
    static let failure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
    static let wouldBlock = Int(NGHTTP2_ERR_WOULDBLOCK.rawValue)

    static func core(_ user: UnsafeMutableRawPointer?) -> HTTP2SessionCore {
        Unmanaged<HTTP2SessionCore>.fromOpaque(user!).takeUnretainedValue()
    }

    static func make() -> OpaquePointer? {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0 else { return nil }
        nghttp2_session_callbacks_set_send_callback(callbacks) { _, data, length, _, user in
            let core = HTTP2Callbacks.core(user)
            guard core.outBytes < HTTP2SessionCore.outLimit else { return HTTP2Callbacks.wouldBlock }
            core.out.append(Array(UnsafeBufferPointer(start: data, count: length)))
            core.outBytes += length
            return length
        }
        nghttp2_session_callbacks_set_send_data_callback(callbacks) { _, frame, header, length, _, user in
            let core = HTTP2Callbacks.core(user)
            guard core.outBytes < HTTP2SessionCore.outLimit else { return Int32(HTTP2Callbacks.wouldBlock) }
            guard let frame, let stream = core.streams[frame.pointee.hd.stream_id] else { return HTTP2Callbacks.failure }
            core.out.append(Array(UnsafeBufferPointer(start: header, count: 9)))
            let done = stream.take(length, into: &core.out)
            core.outBytes += 9 + length
            if let source = stream.source {
                for batch in done { core.framed.append((source, batch)) }
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks) { _, header, user in
            guard let header else { return 0 }
            return HTTP2Callbacks.core(user).beganFrame(header.pointee)
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue,
                  frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
            return HTTP2Callbacks.core(user).beganRequest(frame.pointee.hd.stream_id)
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue else { return 0 }
            return HTTP2Callbacks.core(user).received(
                header: UnsafeBufferPointer(start: name, count: nameLength),
                value: UnsafeBufferPointer(start: value, count: valueLength), on: frame.pointee.hd.stream_id)
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, id, data, length, user in
            HTTP2Callbacks.core(user).received(body: UnsafeBufferPointer(start: data, count: length), on: id)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            let type = UInt32(frame.pointee.hd.type)
            if type == NGHTTP2_HEADERS.rawValue { HTTP2Callbacks.core(user).headersEnded(frame.pointee.hd.stream_id) }
            guard type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue,
                  frame.pointee.hd.flags & cnghttp2_FLAG_END_STREAM != 0 else { return 0 }
            HTTP2Callbacks.core(user).requestEnded(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            return HTTP2Callbacks.core(user).sent(frame.pointee)
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, id, _, user in
            let core = HTTP2Callbacks.core(user)
            if let stream = core.streams.removeValue(forKey: id) {
                core.close(stream)
                if core.streams.isEmpty { core.idleSince = .now }
            }
            return 0
        }
        return callbacks
    }

    /// The data provider of every response body: the stream's pending bytes, sent
    /// without copying (`send_data_callback` frames them); deferred while there are
    /// none and the body goes on (the source is asked, then `resume_data`).
    static let read: nghttp2_data_source_read_callback = { _, id, _, length, flags, _, user in
        let core = HTTP2Callbacks.core(user)
        guard let stream = core.streams[id], let flags else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        guard stream.pendingBytes > 0 else {
            if stream.bodyEnds {
                flags.pointee |= cnghttp2_DATA_FLAG_EOF
                return 0
            }
            if stream.source != nil { core.needsTake.insert(id) }
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        let count = min(length, stream.pendingBytes)
        flags.pointee |= cnghttp2_DATA_FLAG_NO_COPY
        if count == stream.pendingBytes && stream.bodyEnds { flags.pointee |= cnghttp2_DATA_FLAG_EOF }
        return count
    }
}
