/// Where a multi-chunk write stands: the next chunk and the offset inside it.
struct WritePosition {
    let counts: [Int]
    var index = 0
    var offset = 0
    /// Bytes not written yet.
    private(set) var remaining: Int

    init(chunks: [[UInt8]]) {
        counts = chunks.map { $0.count }  // not a key path: that is a runtime projection per chunk
        remaining = counts.reduce(0, +)
        skipEmpty()
    }

    var isDone: Bool { index >= counts.count }

    mutating func advance(by written: Int) {
        remaining -= written
        var unaccounted = written
        while unaccounted > 0 && index < counts.count {
            let left = counts[index] - offset
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
        while index < counts.count && counts[index] == offset {
            index += 1
            offset = 0
        }
    }
}
