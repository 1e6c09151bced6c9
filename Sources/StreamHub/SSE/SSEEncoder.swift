/// The one encoder of SSE framing, shared by the hub, the gateway and the tests.
///
/// Choices (API.md, "Subscribing"):
/// - Every data line is written `data: <line>` — an empty line as `data: \n` — and a
///   WHATWG parser strips that one space, so an empty value reads back as "".
/// - CR, LF and CRLF in a value each end a line, exactly as a parser splits them; a
///   value therefore reads back with every line break as LF.
/// - An event name is written only when non-empty; CR and LF are removed from it (the
///   gateway validates names, this only guarantees a name can never inject fields).
public enum SSEEncoder {
    private static let lf: UInt8 = 0x0A
    private static let cr: UInt8 = 0x0D

    /// One event: `id: 7\nevent: x\ndata: l1\ndata: l2\n\n` (id and event lines only
    /// when given).
    public static func event(id: UInt64?, event: String?, data: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.utf8.count + 40)
        let name = event.flatMap { $0.isEmpty ? nil : $0.utf8.filter { $0 != cr && $0 != lf } } ?? []
        // The id line (and, without an event line, the first `data: `) put together on the
        // stack and appended at once (it was an append per digit, issue 27). At most
        // "id: " + 20 digits (UInt64.max) + LF + "data: ": 31 bytes.
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 1) { line in
            var at = 0
            if let id {
                at = FrameWriter.put("id: ", into: line, at: at)
                at = FrameWriter.put(id, digits: FrameWriter.decimalDigits(id), into: line, at: at)
                line[at] = lf
                at += 1
            }
            if name.isEmpty { at = FrameWriter.put("data: ", into: line, at: at) }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[..<at]))
        }
        if !name.isEmpty {
            append("event: ", to: &out)
            out.append(contentsOf: name)
            out.append(lf)
            append("data: ", to: &out)
        }
        var data = data
        data.withUTF8 { bytes in appendDataLines(bytes, to: &out) }
        out.append(lf)
        out.append(lf)
        return out
    }

    /// Appends `text`'s bytes (as raw bytes: `String.UTF8View`'s append is generic work).
    @inline(__always)
    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `retry: 2000\n\n`: tells the client how long to wait before reconnecting.
    public static func retry(milliseconds: Int) -> [UInt8] {
        precondition(milliseconds >= 0, "retry must not be negative")
        var out = Array("retry: ".utf8)
        appendDecimal(UInt64(milliseconds), to: &out)
        out.append(lf)
        out.append(lf)
        return out
    }

    /// `: hb\n\n`: a comment, ignored by parsers, that keeps proxies and clients awake.
    public static let heartbeat: [UInt8] = Array(": hb\n\n".utf8)

    /// `event: gap\ndata: <N+1>\n\n`: the first id the resuming client can no longer
    /// have. No id line, so the client's Last-Event-ID is unchanged.
    public static func gap(firstMissingID: UInt64) -> [UInt8] {
        var out = Array("event: gap\ndata: ".utf8)
        appendDecimal(firstMissingID, to: &out)
        out.append(lf)
        out.append(lf)
        return out
    }

    /// The `data: ` lines of `bytes` after the first line's `data: `, each line break (CR,
    /// LF, CRLF) ending one; the runs between breaks are found a word at a time and copied whole.
    private static func appendDataLines(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var start = 0
        var index = lineBreak(in: bytes, from: 0)
        while index < bytes.count {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            out.append(lf)
            append("data: ", to: &out)
            // The LF of a CRLF belongs to the CR's break.
            index += bytes[index] == cr && index + 1 < bytes.count && bytes[index + 1] == lf ? 2 : 1
            start = index
            index = lineBreak(in: bytes, from: index)
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
    }

    /// The index of the first CR or LF of `bytes` at or after `start`, or `bytes.count`.
    /// Eight bytes at a time while they last (a value is mostly one line: a byte-by-byte
    /// scan was 1,000 instructions of a 128-byte publish, issue 27), then byte by byte.
    private static func lineBreak(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                // A byte below 0x0E is rare in a value: only then is the word looked at for CR and LF.
                if hasByteBelow0E(word),
                   hasZeroByte(word ^ 0x0D0D_0D0D_0D0D_0D0D) || hasZeroByte(word ^ 0x0A0A_0A0A_0A0A_0A0A) { break }
                index += 8
            }
        }
        while index < bytes.count, bytes[index] != cr, bytes[index] != lf { index += 1 }
        return index
    }

    /// Whether any byte of `word` is below 0x0E (exact as a yes or no, as `hasZeroByte`:
    /// the lowest such byte borrows into its own high bit, and a byte of 0x80 or more is
    /// masked by `~word`).
    @inline(__always)
    private static func hasByteBelow0E(_ word: UInt64) -> Bool {
        (word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word & 0x8080_8080_8080_8080 != 0
    }

    /// Whether any byte of `word` is zero (exact as a yes or no: a borrow can only
    /// start at a zero byte).
    @inline(__always)
    private static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0
    }

    private static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        // Largest power of ten not above value (10^19 fits in UInt64), then digits down.
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        repeat {
            out.append(UInt8(truncatingIfNeeded: value / divisor % 10) &+ 0x30)
            divisor /= 10
        } while divisor > 0
    }
}
