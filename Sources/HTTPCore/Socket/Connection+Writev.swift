import Glibc

extension Connection {
    /// Chunks of the caller's one `writev` takes at most (a head and a tail are two more).
    static let writevChunkLimit = 62

    /// The connection's one `writev`: `head`, then up to `writevChunkLimit` of
    /// `chunks` from `index` (the first from `offset`), then `tail`; empty parts are
    /// left out. Nothing is copied or allocated on the heap: each chunk's bytes are
    /// pinned by nesting `withUnsafeBytes` for the one synchronous syscall. Counts
    /// the bytes written.
    func writevOnce(head: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                    chunks: [[UInt8]], from index: Int = 0, offset: Int = 0,
                    tail: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) throws -> IOResult<Int> {
        let end = min(chunks.count, index + Self.writevChunkLimit)
        let result = try withUnsafeTemporaryAllocation(of: iovec.self, capacity: end - index + 2) { iov in
            // The entries' count is passed along, not captured: a variable the nested
            // functions captured was checked for exclusive access at run time on every
            // use (about 300 instructions a delivery, issue 27).
            func add(_ raw: UnsafeRawBufferPointer, _ count: inout Int) {
                guard raw.count > 0 else { return }
                iov[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
                count += 1
            }
            func pin(_ i: Int, _ count: inout Int) throws -> IOResult<Int> {
                if i == end {
                    add(tail, &count)
                    return try Syscall.writev(fd, iov.baseAddress!, Int32(count))
                }
                return try chunks[i].withUnsafeBytes { raw in
                    add(i == index && offset > 0 ? UnsafeRawBufferPointer(rebasing: raw[offset...]) : raw, &count)
                    return try pin(i + 1, &count)
                }
            }
            var count = 0
            add(head, &count)
            return try pin(index, &count)
        }
        if case .processed(let written) = result { counters?.bytesWritten.add(UInt64(written), ordering: .relaxed) }
        return result
    }
}
