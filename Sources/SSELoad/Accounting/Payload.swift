/// The body of every publish: `<publisher>:<sequence>:<sentNanos>:` padded
/// with `x` to the asked size (a header longer than the size is not cut).
///
/// `sequence` counts one publisher's publishes to one topic, from 1, so a
/// subscriber sees each publisher's as consecutive numbers. `sentNanos` is
/// `MonotonicClock.nanoseconds()` just before the request is written; the
/// subscribers run in the same process and read the same clock.
struct Payload: Sendable, Equatable {
    var publisher: Int
    var sequence: UInt64
    var sentNanos: UInt64

    /// The body bytes, at least `size` long.
    func encoded(size: Int) -> [UInt8] {
        var bytes = Array("\(publisher):\(sequence):\(sentNanos):".utf8)
        if bytes.count < size { bytes.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: size - bytes.count)) }
        return bytes
    }

    /// The header of an event's data; nil if it is not one of ours.
    init?(parsing data: String) {
        var utf8 = data
        let parsed = utf8.withUTF8 { Payload(parsing: $0) }
        guard let parsed else { return nil }
        self = parsed
    }

    init(publisher: Int, sequence: UInt64, sentNanos: UInt64) {
        self.publisher = publisher
        self.sequence = sequence
        self.sentNanos = sentNanos
    }

    /// Reads three colon-terminated decimal fields without allocating.
    init?(parsing bytes: UnsafeBufferPointer<UInt8>) {
        var fields: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var index = 0
        for field in 0..<3 {
            var value: UInt64 = 0
            var digits = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10, digits < 19 else { return nil }
                value = value * 10 + UInt64(digit)
                digits += 1
                index += 1
            }
            guard digits > 0, index < bytes.count else { return nil }
            index += 1  // the colon
            switch field {
            case 0: fields.0 = value
            case 1: fields.1 = value
            default: fields.2 = value
            }
        }
        guard fields.0 <= UInt64(UInt16.max) else { return nil }
        self.init(publisher: Int(fields.0), sequence: fields.1, sentNanos: fields.2)
    }

    /// Publisher and sequence packed in one word (publisher in the top 16
    /// bits), as subscribers report their last delivery; never 0.
    var tag: UInt64 { UInt64(publisher) << 48 | (sequence & 0xFFFF_FFFF_FFFF) }
}
