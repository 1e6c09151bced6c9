/// A Redis Cluster redirection: the error reply `MOVED <slot> <host>:<port>` (the
/// slot belongs to that node now: refresh the slot map) or `ASK <slot> <host>:<port>`
/// (the slot is being migrated: send this one command there, after `ASKING`).
///
/// Promises: parsed only from an error reply of exactly that form; `address.host`
/// is the host given, or the `answeringHost` when Redis left it out (`:6380`).
public struct ClusterRedirection: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The slot has a new owner for good.
        case moved = "MOVED"
        /// The slot is migrating; only this command goes to `address`, after `ASKING`.
        case ask = "ASK"
    }

    public let kind: Kind
    public let slot: HashSlot
    public let address: ClusterAddress

    public init(kind: Kind, slot: HashSlot, address: ClusterAddress) {
        self.kind = kind
        self.slot = slot
        self.address = address
    }

    /// Parses an error reply's message; nil for anything but a well-formed redirection.
    public init?(errorMessage message: String, answeringHost: String? = nil) {
        let parts = message.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, let kind = Kind(rawValue: String(parts[0])),
              parts[1].utf8.count <= 5, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let number = Int(parts[1]), let slot = HashSlot(number),
              let address = ClusterAddress(parsing: parts[2], defaultHost: answeringHost) else { return nil }
        self.init(kind: kind, slot: slot, address: address)
    }

    /// The redirection a call failed with (`RedisError.server`), if it was one.
    public init?(_ error: RedisError, answeringHost: String? = nil) {
        guard case .server(let message) = error else { return nil }
        self.init(errorMessage: message, answeringHost: answeringHost)
    }

    public var description: String { "\(kind.rawValue) \(slot) \(address)" }
}

/// What a cluster's error reply means for whoever routes commands, beyond
/// redirections: retry later, or the cluster (or this node's view of it) is down.
public enum ClusterRefusal: Sendable, Hashable {
    /// `TRYAGAIN`: a multi-key command during a slot migration; retry shortly.
    case tryAgain
    /// `CLUSTERDOWN`: the node serves no command now (slots unassigned, or a
    /// master lost and not yet replaced): refresh the map and retry later.
    case clusterDown
    /// `READONLY` (a replica was written to) or `MASTERDOWN`: the node is not
    /// the master any more: refresh the map.
    case notMaster

    /// Nil for an error that is none of these (a redirection included).
    public init?(errorMessage message: String) {
        let code = message.prefix { $0 != " " }
        switch code {
        case "TRYAGAIN": self = .tryAgain
        case "CLUSTERDOWN": self = .clusterDown
        case "READONLY", "MASTERDOWN": self = .notMaster
        default: return nil
        }
    }

    public init?(_ error: RedisError) {
        guard case .server(let message) = error else { return nil }
        self.init(errorMessage: message)
    }
}
