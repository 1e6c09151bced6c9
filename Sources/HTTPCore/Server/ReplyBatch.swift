/// The replies an HTTP/1.1 connection has made but not written yet, kept in order so
/// that the replies to requests read together (pipelining) leave in one `writev`.
///
/// The request loop adds each complete reply here and writes the batch (`flush`) before
/// it reads again, before anything else is written (`100 Continue`, a refusal, a
/// stream's head), before the connection is listed idle or closes, and as soon as the
/// batch holds `flushThreshold` bytes: so a client that pipelines and does not read
/// holds at most one batch (plus the one reply that crossed the threshold) in the
/// server, and the write's deadline cuts it off as before.
///
/// Small replies are encoded straight into one buffer (`openBuffer`/`closeBuffer`), which
/// is kept between requests up to `keptCapacity` bytes, as is the array of chunks handed
/// to the write: a keep-alive connection answering one request per read allocates
/// neither per reply. Owned by the connection's request loop.
struct ReplyBatch {
    /// Buffers closed before `open`, in order (a large body is a chunk of its own).
    private var chunks: [[UInt8]] = []
    /// The buffer the next small reply is appended to; its bytes follow `chunks`.
    private var open: [UInt8] = []
    /// Bytes in `chunks`.
    private var closedBytes = 0
    /// Where a write that would have blocked stopped (`writeNow`), for `finishWrite`.
    private var stopped: WritePosition?

    /// Once this many bytes are waiting, the loop writes them before serving more.
    static let flushThreshold = 16 * 1024
    /// The open buffer's capacity kept after a write (a larger one is released).
    static let keptCapacity = 1024

    /// Bytes waiting (while a buffer is open, those outside it).
    var byteCount: Int { closedBytes + open.count }
    var isEmpty: Bool { byteCount == 0 }
    var isFull: Bool { byteCount >= Self.flushThreshold }

    /// Moves the open buffer out, with room for `capacity` more bytes, for an encoder
    /// to append one reply to; hand it back with `closeBuffer`.
    mutating func openBuffer(reserving capacity: Int) -> [UInt8] {
        var buffer = open
        open = []
        buffer.reserveCapacity(buffer.count + capacity)
        return buffer
    }

    /// Takes back the buffer `openBuffer` gave, with one more reply appended to it,
    /// and `body` (a large body, not copied) after it.
    mutating func closeBuffer(_ buffer: [UInt8], body: [UInt8] = []) {
        open = buffer
        guard !body.isEmpty else { return }
        closedBytes += open.count + body.count
        chunks.append(open)
        chunks.append(body)
        open = []
    }

    /// Adds bytes made elsewhere (a refusal, `100 Continue`) after every reply so far.
    mutating func append(_ parts: [[UInt8]]) {
        if !open.isEmpty {
            closedBytes += open.count
            chunks.append(open)
            open = []
        }
        for part in parts where !part.isEmpty {
            chunks.append(part)
            closedBytes += part.count
        }
    }

    /// Writes everything waiting, in one `writev` when the socket takes it, and empties
    /// the batch (also when the write fails: the connection then closes). What the socket
    /// takes at once is written here without a suspension or a task frame (inlined into
    /// the request loop: the usual case of a client waiting for its reply); only the rest
    /// waits for writability. On the caller's executor: no executor switch.
    @inline(__always)
    nonisolated(nonsending) mutating func flush(on connection: Connection, deadline: LoopDeadline) async throws {
        guard try !writeNow(on: connection) else { return }
        try await finishWrite(on: connection, deadline: deadline)
    }

    /// Writes what the socket takes now, never waiting; true when the batch is empty
    /// after it. False leaves the rest, and where it stopped, for `finishWrite`.
    mutating func writeNow(on connection: Connection) throws -> Bool {
        guard byteCount > 0 else { return true }
        let done: Bool
        do {
            // In a scope of its own: the position shares `chunks`, which `reset` empties
            // in place only once nothing else holds it.
            var position = stopped.take() ?? startWrite()
            done = try connection.writeAvailable(chunks, at: &position) == .done
            if !done { stopped = position }
        } catch {
            reset()
            throw error
        }
        if done { reset() }
        return done
    }

    /// The rest of a write `writeNow` began, waiting for writability as often as needed.
    private nonisolated(nonsending) mutating func finishWrite(on connection: Connection,
                                                              deadline: LoopDeadline) async throws {
        do {
            var position = stopped.take() ?? startWrite()
            try await connection.write(chunks, from: &position, until: deadline)
        } catch {
            reset()
            throw error
        }
        reset()
    }

    /// Seals the open buffer into `chunks` (its storage shared, not copied) for a write.
    private mutating func startWrite() -> WritePosition {
        if chunks.capacity == 0 { chunks.reserveCapacity(4) }
        if !open.isEmpty { chunks.append(open) }
        return WritePosition(chunks: chunks)
    }

    /// Empty again, keeping the chunk array's storage and a small open buffer's.
    private mutating func reset() {
        stopped = nil
        chunks.removeAll(keepingCapacity: true)
        open.removeAll(keepingCapacity: open.capacity <= Self.keptCapacity)
        closedBytes = 0
    }
}
