/// A request's header fields as the parser validated them, kept as bytes in one buffer:
/// no `String` is made for a field until someone asks for its value.
///
/// Layout, one record per field in arrival order: the name's length and the value's
/// length (4 bytes each, little-endian), then the name's bytes, then the value's bytes
/// (already trimmed of OWS). One allocation per request however many fields it has;
/// lookups walk the records and compare names ASCII case-insensitively on bytes.
/// Holds only what `HTTPFieldLine` accepted, so it never contains CR or LF.
struct HTTPFieldBlock: Sendable, Equatable {
    /// The records, back to back.
    private var storage: [UInt8] = []
    /// How many fields the records hold.
    private(set) var count = 0

    init() {}

    /// Appends one field (`name` exactly as sent, `value` trimmed).
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        precondition(name.count <= Int(UInt32.max) && value.count <= Int(UInt32.max), "a field line over 4 GiB")
        if storage.isEmpty { storage.reserveCapacity(256) }
        // The record is put together on the stack and appended at once: an
        // `Array.append(contentsOf:)` costs about 100 instructions whatever it appends,
        // three of them a field (issue 27).
        let lengths = (UInt64(value.count) << 32 | UInt64(name.count)).littleEndian
        withUnsafeTemporaryAllocation(byteCount: 8 + name.count + value.count, alignment: 8) { record in
            record.storeBytes(of: lengths, as: UInt64.self)
            UnsafeMutableRawBufferPointer(rebasing: record[8...]).copyMemory(from: name)
            UnsafeMutableRawBufferPointer(rebasing: record[(8 + name.count)...]).copyMemory(from: value)
            storage.append(contentsOf: UnsafeRawBufferPointer(record))
        }
        count += 1
    }

    /// Calls `body` with each field's name and value bytes, in order, until it returns false.
    func forEach(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) {
        storage.withUnsafeBytes { all in
            var i = 0
            while i < all.count {
                let nameCount = Self.length(in: all, at: i)
                let valueCount = Self.length(in: all, at: i + 4)
                let nameStart = i + 8, valueStart = nameStart + nameCount
                i = valueStart + valueCount
                let name = UnsafeRawBufferPointer(rebasing: all[nameStart..<valueStart])
                let value = UnsafeRawBufferPointer(rebasing: all[valueStart..<i])
                if !body(name, value) { return }
            }
        }
    }

    /// Calls `body` with the value of each field named `name` (ASCII case-insensitive), in
    /// order, until it returns false.
    func forEachValue(named name: String, _ body: (UnsafeRawBufferPointer) -> Bool) {
        var name = name
        name.withUTF8 { wanted in
            forEach { fieldName, value in
                guard HTTPSyntax.equalsIgnoringCase(fieldName, UnsafeRawBufferPointer(wanted)) else { return true }
                return body(value)
            }
        }
    }

    /// Every field as strings (values from bytes, obs-text repaired as UTF-8).
    var strings: [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        out.reserveCapacity(count)
        forEach { name, value in
            out.append((name: HTTPSyntax.string(name), value: HTTPSyntax.string(value)))
            return true
        }
        return out
    }

    @inline(__always)
    private static func length(in bytes: UnsafeRawBufferPointer, at i: Int) -> Int {
        Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
    }
}
