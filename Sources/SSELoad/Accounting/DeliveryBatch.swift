/// What one subscriber saw in one read: counts, the latencies to record, and
/// its last delivery. Reused read after read (`reset` keeps the capacity), so
/// a steady stream does not allocate for accounting.
struct DeliveryBatch: Sendable {
    /// Deliveries of our payloads, duplicates included.
    var received = 0
    var duplicates = 0
    var outOfOrder = 0
    /// Events whose data is not one of this run's payloads.
    var unrecognized = 0
    /// Delivery latencies in nanoseconds.
    var latencies: [UInt64] = []
    /// `Payload.tag` of the last delivery, 0 if none in this batch.
    var lastTag: UInt64 = 0

    init() {
        latencies.reserveCapacity(64)
    }

    var isEmpty: Bool { received == 0 && unrecognized == 0 }

    mutating func reset() {
        received = 0
        duplicates = 0
        outOfOrder = 0
        unrecognized = 0
        latencies.removeAll(keepingCapacity: true)
        lastTag = 0
    }
}
