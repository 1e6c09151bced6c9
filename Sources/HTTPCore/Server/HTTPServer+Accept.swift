import Glibc

/// The accept loop: one acceptor spreading connections over the loops, a child task per
/// connection, the cap on connections (total and per address) answered with `503`, and
/// the descriptor reserve that keeps the process from running out.
extension HTTPServer {
    /// Accepts and serves connections until `shutdown()` (or cancellation),
    /// then waits for every connection task to end. Accepting and every
    /// connection run on the loop's thread (`EventLoop+Executor`).
    public func run() async {
        await withTaskExecutorPreference(loop) { await acceptAndServe() }
    }

    private func acceptAndServe() async {
        guard enterRunning() else { return }
        let reserveStart = Self.reserveStart(limit: Self.descriptorLimit.soft)
        let connections = ConnectionGroups()
        await connections.serve {
            var backoff = Self.firstBackoff
            // Set when the last accepted descriptor reached the reserve: then
            // every accept first checks that a descriptor below it is free.
            var nearLimit = false
            var acceptedSinceYield = 0
            while !Task.isCancelled {
                if nearLimit {
                    if isShuttingDown { break }  // accept would say so; it is not called here
                    nearLimit = Self.lowestFreeDescriptor().map { $0 >= reserveStart } ?? true
                    if nearLimit {
                        // As out of descriptors: the client waits in the backlog.
                        counters.acceptBackoffs.add(1, ordering: .relaxed)
                        if backoff == Self.firstBackoff {
                            onAcceptError(SystemError(call: "descriptor reserve (\(Self.descriptorReserve)) reached", errno: EMFILE))
                        }
                        try? await Task.sleep(for: backoff)
                        backoff = min(backoff * 2, .seconds(1))
                        continue
                    }
                }
                let connection: Connection
                do {
                    connection = try await listener.accept(counters: counters, tls: tls, on: leastBusyLoop())
                    backoff = Self.firstBackoff
                    nearLimit = connection.fd >= reserveStart
                } catch let error as SystemError where error.isResourceExhaustion {
                    // Out of descriptors: the pending connection waits in the
                    // backlog; keep serving the open ones and try again later.
                    // Logged once per run of back-offs, not once per retry.
                    counters.acceptBackoffs.add(1, ordering: .relaxed)
                    if backoff == Self.firstBackoff { onAcceptError(error) }
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(1))
                    continue
                } catch is SystemError {
                    continue  // e.g. ECONNABORTED: that client gave up; the next may not
                } catch {
                    break  // listener closed (shutdown) or the task was cancelled
                }
                if counters.open.load(ordering: .relaxed) > configuration.maxConnections {
                    counters.refused.add(1, ordering: .relaxed)
                    connections.start(on: connection.loop) { await self.refuse(connection) }
                } else if let limit = configuration.maxConnectionsPerAddress,
                          let address = AddressCounts.peerAddress(of: connection.fd) {
                    if addressCounts.admit(address, limit: limit) {
                        connections.start(on: connection.loop) {
                            await self.serve(connection)
                            self.addressCounts.release(address)
                        }
                    } else {
                        counters.refusedPerAddress.add(1, ordering: .relaxed)
                        connections.start(on: connection.loop) {
                            await self.refuse(connection, reason: "too many connections from your address, retry later")
                        }
                    }
                } else {
                    connections.start(on: connection.loop) { await self.serve(connection) }
                }
                // Behind the connection tasks just started, every few accepts: while
                // clients keep arriving, accept never returns "would block", and this
                // loop would otherwise accept faster than connections are served,
                // holding thousands of them (and their memory) in user space instead
                // of leaving the excess in the kernel's listen queue. Not after each
                // one: a yield waits for a whole turn of the loop, which a big fan-out
                // can make long.
                acceptedSinceYield += 1
                if acceptedSinceYield == Self.acceptsPerYield {
                    acceptedSinceYield = 0
                    await Task.yield()
                }
            }
            listener.close()
        }
        enterStopped()
    }

    /// The loop a new connection goes to: the one with the fewest registered
    /// descriptors. One acceptor choosing, rather than a `SO_REUSEPORT` listener per
    /// loop: the kernel spreads those by a hash of the client's address and port, so
    /// a few long-lived streams can land on one loop, and a second process could bind
    /// the same port without an error.
    private func leastBusyLoop() -> EventLoop {
        guard loops.count > 1 else { return loops[0] }
        var best = loops[0]
        var fewest = best.registeredDescriptors
        for loop in loops.dropFirst() {
            let count = loop.registeredDescriptors
            if count < fewest { (best, fewest) = (loop, count) }
        }
        return best
    }

    /// Connections accepted in a row before the accept loop lets them run.
    static let acceptsPerYield = 16

    /// The first pause after running out of descriptors; it doubles up to 1 s.
    static let firstBackoff = Duration.milliseconds(10)

    /// Descriptors the accept loop leaves free for everything else (a quarter
    /// of a tiny limit). The process must never run out: besides static files,
    /// libdispatch opens `/proc/<tid>/stat` once a second while work is queued
    /// and traps (killing the process) when that `open` fails with `EMFILE`.
    static let descriptorReserve = 32

    /// The first descriptor number of the reserve under `limit`.
    static func reserveStart(limit: UInt64) -> Int32 {
        let limit = Int64(clamping: limit)
        return Int32(clamping: limit - min(Int64(descriptorReserve), limit / 4))
    }

    /// The number the next new descriptor would get (the lowest free one), nil
    /// if none is free; probed with a throwaway eventfd.
    private static func lowestFreeDescriptor() -> Int32? {
        guard let probe = try? Syscall.eventFD() else { return nil }
        Syscall.close(probe)
        return probe
    }


    /// Answers `503` with `Retry-After` to a connection over the cap, then closes it
    /// (in HTTP/2 to a client that speaks it: `HTTPServer+HTTP2Refusal.swift`).
    private func refuse(_ connection: Connection, reason: String = "too many connections, retry later") async {
        defer { connection.close() }
        guard await establishTLS(on: connection, deadline: .now + .seconds(1)) else { return }
        if let initial = await http2Opening(of: connection) {
            return await refuseHTTP2(connection, initial: initial, reason: reason)
        }
        let answer = refusal(.serviceUnavailable, reason,
                             extra: ["Retry-After": "\(configuration.retryAfterSeconds)"])
        try? await connection.write(answer, deadline: .now + .seconds(1))
    }
}
