import HTTPCore
import StreamHub
import TestSupport

/// A subscriber that sends its request and then reads nothing, not even the
/// response head, until the test drains it.
///
/// On loopback a client that does not read lets the kernel hold megabytes for
/// it (the server's send buffer grows with loopback's 64 KiB segments): 200 of
/// them hold hundreds of megabytes. Draining therefore decodes the HTTP head and
/// the chunked framing without keeping the body — only its last `keep` bytes,
/// from which the final events are parsed. Used from one task.
final class StalledStream {
    private enum Framing {
        case head
        case size
        case data(remaining: Int)
        case dataEnd(remaining: Int)
        case trailers
        case ended
    }

    /// Decoded body bytes kept at the end of the stream: several events.
    static let keep = 16 * 1024

    let connection: Connection
    private var framing = Framing.head
    /// Bytes of the head, or of the current size or trailer line, until complete.
    private var line: [UInt8] = []
    private(set) var status: Int?
    /// The last decoded body bytes (up to twice `keep` between trims).
    private(set) var tail: [UInt8] = []
    /// Decoded body bytes in all.
    private(set) var bodyBytes = 0

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Connects and sends `GET target`; reads nothing.
    static func open(port: Int, target: String) async throws -> StalledStream {
        guard let address = SocketAddress.resolve(host: "127.0.0.1", port: port) else {
            throw HarnessFailure("no address for port \(port)")
        }
        let connection = try await Connection.connect(to: address, deadline: .now + .seconds(10))
        let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        do {
            try await connection.write(Array(request.utf8), deadline: .now + .seconds(10))
        } catch {
            connection.close()
            throw error
        }
        return StalledStream(connection: connection)
    }

    /// Reads everything, up to `seconds`, until the stream ends or the last
    /// event has the id `lastID` (checked after every read: it costs one event).
    func drain(within seconds: Double, untilLastID lastID: UInt64? = nil) async -> SSEEnding {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let readSize = 256 * 1024
        do {
            while true {
                let bytes = try await connection.read(maxBytes: readSize, deadline: deadline)
                if bytes.isEmpty {
                    if case .ended = framing { return .terminated }
                    return .cut("EOF before the chunked terminator")
                }
                try decode(bytes)
                if case .ended = framing {
                    let after = try await connection.read(deadline: deadline)
                    return after.isEmpty ? .terminated : .cut("bytes after the terminator")
                }
                if let lastID, lastEvent()?.id == "\(lastID)" { return .reached }
            }
        } catch IOWaitError.timedOut {
            return .stillOpen
        } catch {
            return .cut("\(error)")
        }
    }

    /// The complete events at the end of what arrived, parsed from the first
    /// event boundary inside the kept bytes (the event cut by the trim is dropped).
    func lastEvents() -> [SSEEvent] {
        var start = 0
        if bodyBytes > tail.count {
            var index = 0
            while index + 1 < tail.count && !(tail[index] == 0x0A && tail[index + 1] == 0x0A) { index += 1 }
            start = index + 2
        }
        guard start < tail.count else { return [] }
        var parser = SSEParser()
        return (try? parser.feed(Array(tail[start...]))) ?? []
    }

    /// The last event, if what arrived ends with a complete one: found by looking
    /// back from the end for the blank line before it, so it costs one event.
    func lastEvent() -> SSEEvent? {
        let count = tail.count
        guard count >= 2, tail[count - 1] == 0x0A, tail[count - 2] == 0x0A else { return nil }
        var index = count - 3
        while index > 0 && !(tail[index] == 0x0A && tail[index - 1] == 0x0A) { index -= 1 }
        let start: Int
        if index > 0 {
            start = index + 1
        } else if bodyBytes == count {
            start = 0
        } else {
            return nil
        }
        var parser = SSEParser()
        return (try? parser.feed(Array(tail[start...])))?.last
    }

    /// Decodes the head and the chunked framing of `bytes`.
    private func decode(_ bytes: [UInt8]) throws {
        var index = 0
        while index < bytes.count {
            switch framing {
            case .head:
                line.append(bytes[index])
                index += 1
                if line.count >= 4 && line.suffix(4).elementsEqual([0x0D, 0x0A, 0x0D, 0x0A]) {
                    let text = String(decoding: line, as: UTF8.self)
                    let parts = text.split(separator: " ", maxSplits: 2)
                    status = parts.count > 1 ? Int(parts[1]) : nil
                    guard status == 200, text.lowercased().contains("transfer-encoding: chunked") else {
                        throw HarnessFailure("not a chunked 200: \(text.prefix(200))")
                    }
                    line = []
                    framing = .size
                }
            case .size, .trailers:
                let byte = bytes[index]
                index += 1
                guard byte == 0x0A else {
                    line.append(byte)
                    continue
                }
                if line.last == 0x0D { line.removeLast() }
                if case .trailers = framing {
                    if line.isEmpty { framing = .ended }
                } else {
                    let hex = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
                    guard let size = Int(hex, radix: 16) else { throw HarnessFailure("bad chunk size line \(hex)") }
                    framing = size == 0 ? .trailers : .data(remaining: size)
                }
                line = []
            case .data(let remaining):
                let take = min(remaining, bytes.count - index)
                // Only what may end up in the tail is copied, through buffer pointers
                // (memcpy, where a debug build would copy slices byte by byte).
                let from = max(index, index + take - Self.keep)
                // Skipping part of this read leaves what the tail held before out of
                // sequence: the tail starts over (it then holds exactly `keep` bytes).
                if from > index { tail.removeAll(keepingCapacity: true) }
                bytes.withUnsafeBufferPointer { tail.append(contentsOf: UnsafeBufferPointer(rebasing: $0[from..<(index + take)])) }
                bodyBytes += take
                index += take
                if tail.count > 2 * Self.keep {
                    tail = tail.withUnsafeBufferPointer { Array(UnsafeBufferPointer(rebasing: $0[($0.count - Self.keep)...])) }
                }
                framing = take == remaining ? .dataEnd(remaining: 2) : .data(remaining: remaining - take)
            case .dataEnd(let remaining):
                index += 1
                framing = remaining == 1 ? .size : .dataEnd(remaining: remaining - 1)
            case .ended:
                throw HarnessFailure("bytes after the chunked terminator")
            }
        }
    }

    func close() { connection.close() }
}

extension [StalledStream] {
    /// Drains every stream (see `StalledStream.drain`), 25 at a time: one after
    /// the other, 200 sockets holding megabytes each would take seconds of
    /// round trips. Each stream is used by one task only.
    func drainAll(within seconds: Double, untilLastID lastID: UInt64? = nil) async -> [SSEEnding] {
        nonisolated(unsafe) let streams = self
        return await withTaskGroup(of: (Int, SSEEnding).self, returning: [SSEEnding].self) { group in
            var endings = [SSEEnding](repeating: .stillOpen, count: streams.count)
            var next = 0
            func start() {
                let index = next
                next += 1
                group.addTask { (index, await streams[index].drain(within: seconds, untilLastID: lastID)) }
            }
            while next < Swift.min(25, streams.count) { start() }
            for await (index, ending) in group {
                endings[index] = ending
                if next < streams.count { start() }
            }
            return endings
        }
    }
}
