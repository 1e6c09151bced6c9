/// A Redis Cluster hash slot: which of the 16,384 slots a key (or a sharded
/// pub/sub channel) belongs to, computed exactly as Redis does (`CLUSTER KEYSLOT`).
///
/// Promises: `value` is in `0..<16384`; keys that share a non-empty `{hash tag}`
/// share a slot, so `sse:{news}:id` and `sse:{news}:log` are served by one master.
public struct HashSlot: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// How many slots a cluster has.
    public static let count = 16_384

    public let value: Int

    /// A slot number; nil outside `0..<16384`.
    public init?(_ value: Int) {
        guard (0..<Self.count).contains(value) else { return nil }
        self.value = value
    }

    /// The slot of `key`: CRC16-XMODEM of the key (or of its hash tag) mod 16384.
    ///
    /// The hash tag is the text between the first `{` and the first `}` after it,
    /// when that text is not empty; otherwise the whole key is hashed (Redis's rule:
    /// `{}x` and `x{` hash whole, `{a}{b}` hashes `a`).
    public init<Key: Collection>(key: Key) where Key.Element == UInt8 {
        value = Int(Self.crc16(Self.hashedPart(of: key)) & 0x3FFF)
    }

    /// The slot of a UTF-8 key.
    public init(key: String) {
        self.init(key: Array(key.utf8))
    }

    public static func < (left: HashSlot, right: HashSlot) -> Bool { left.value < right.value }

    public var description: String { String(value) }

    /// The bytes Redis hashes: the hash tag when there is a non-empty one, else the key.
    static func hashedPart<Key: Collection>(of key: Key) -> Key.SubSequence where Key.Element == UInt8 {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")) else { return key[...] }
        let afterOpen = key.index(after: open)
        guard let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen else { return key[...] }
        return key[afterOpen..<close]
    }

    /// CRC16-CCITT in its XMODEM variant (polynomial 0x1021, initial 0, no reflection):
    /// the checksum Redis Cluster uses (`crc16.c`); table-driven.
    static func crc16<Bytes: Sequence>(_ bytes: Bytes) -> UInt16 where Bytes.Element == UInt8 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
