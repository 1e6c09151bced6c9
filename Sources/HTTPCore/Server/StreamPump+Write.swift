import Glibc

/// The loop's write of one batch of a pumped stream, without allocating: on a
/// plain socket the chunk's size line is formatted on the stack and the batch's
/// own arrays are handed to one `writev` with it and the closing CRLF. Only a
/// write the socket takes in part (or a TLS stream, whose records gather the
/// chunks anyway) builds the framed chunk list the task resumes from.
extension StreamPump {
    /// What one attempt to write a batch now achieved.
    enum BatchWrite {
        case done
        /// The socket would block: the framed chunks and where the write stopped.
        case blocked(chunks: [[UInt8]], position: WritePosition)
    }

    /// Chunks one `writev` takes at most here (the size line and the CRLF are two more).
    static let directChunkLimit = Connection.writevChunkLimit

    func writeNow(_ batch: StreamBatch) throws -> BatchWrite {
        guard !connection.isTLS, batch.chunks.count <= Self.directChunkLimit else { return try writeFramed(batch) }
        var size = 0
        for chunk in batch.chunks { size += chunk.count }
        guard size > 0 else { return .done }
        let outcome = try withUnsafeTemporaryAllocation(byteCount: 24, alignment: 1) { scratch in
            let header = stream.chunked ? ChunkedEncoding.writeChunkHeader(size: size, into: scratch) : 0
            let trailer = stream.chunked ? 2 : 0
            scratch[header] = HTTPSyntax.cr
            scratch[header + 1] = HTTPSyntax.lf
            let total = header + size + trailer
            let head = UnsafeRawBufferPointer(rebasing: scratch[0..<header])
            let tail = UnsafeRawBufferPointer(rebasing: scratch[header..<header + trailer])
            return (try connection.writevOnce(head: head, chunks: batch.chunks, tail: tail), total)
        }
        switch outcome {
        case (.processed(let written), let total) where written == total:
            return .done
        case (.processed(let written), _):
            let chunks = stream.framed(batch.chunks)
            var position = WritePosition(chunks: chunks)
            position.advance(by: written)
            return try finish(chunks, from: position)
        case (.wouldBlock, _):
            let chunks = stream.framed(batch.chunks)
            return .blocked(chunks: chunks, position: WritePosition(chunks: chunks))
        }
    }

    /// The general path: frame, then write what the socket takes.
    private func writeFramed(_ batch: StreamBatch) throws -> BatchWrite {
        let chunks = stream.framed(batch.chunks)
        return try finish(chunks, from: WritePosition(chunks: chunks))
    }

    private func finish(_ chunks: [[UInt8]], from start: WritePosition) throws -> BatchWrite {
        var position = start
        switch try connection.writeAvailable(chunks, at: &position) {
        case .done: return .done
        case .blocked: return .blocked(chunks: chunks, position: position)
        }
    }
}
