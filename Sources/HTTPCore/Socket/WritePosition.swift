/// Where a multi-chunk write stands: the next chunk and the offset inside it.
struct WritePosition {
    /// The chunks being written (shared with the caller's array, not copied: a position
    /// per write used to allocate an array of their counts, one allocation per response).
    private let chunks: [[UInt8]]
    var index = 0
    var offset = 0
    /// Bytes not written yet.
    private(set) var remaining: Int

    init(chunks: [[UInt8]]) {
        self.chunks = chunks
        var total = 0
        for chunk in chunks { total += chunk.count }
        remaining = total
        skipEmpty()
    }

    var isDone: Bool { index >= chunks.count }

    mutating func advance(by written: Int) {
        remaining -= written
        var unaccounted = written
        while unaccounted > 0 && index < chunks.count {
            let left = chunks[index].count - offset
            if unaccounted >= left {
                unaccounted -= left
                index += 1
                offset = 0
            } else {
                offset += unaccounted
                unaccounted = 0
            }
        }
        skipEmpty()
    }

    private mutating func skipEmpty() {
        while index < chunks.count && chunks[index].count == offset {
            index += 1
            offset = 0
        }
    }
}
