import Locking

/// Writes a pumped streaming response (`SourcedBody`): the event loop takes the
/// source's batches at the end of a turn and writes each one straight to the
/// socket (one `writev`, the frames shared, never copied per subscriber), so a
/// publish to ten thousand subscribers resumes no task at all. Only when the
/// socket would block does the connection's task get the rest, wait for
/// writability and write it; meanwhile the source keeps gathering (its own bound
/// decides when a subscriber is too slow).
///
/// The connection's task owns the stream's lifetime: `run` returns when the source
/// finishes, the client goes away, the task is cancelled or `endsAt` passes, with
/// one cancellation handler for the whole stream. See `StreamPumpState` for who
/// writes when.
final class StreamPump: TurnEndWork, Sendable {
    private typealias State = StreamPumpState<CheckedContinuation<StreamPumpEvent<Handover>, Never>, Handover>

    /// A batch the socket did not take at once, and where it stopped. A class: an
    /// event carrying it stays one word in the task's frames (blocked writes are rare).
    final class Handover: Sendable {
        let chunks: [[UInt8]]
        let position: WritePosition
        /// What the source is told once it is written (nil for a first write without a batch).
        let batch: StreamBatch?

        init(chunks: [[UInt8]], position: WritePosition, batch: StreamBatch?) {
            self.chunks = chunks
            self.position = position
            self.batch = batch
        }
    }

    let stream: ResponseStream
    private let source: any StreamSource
    /// The pump's phase, and the callback the source calls when it has frames
    /// (made once per stream, when it starts).
    private struct Guarded {
        var pump = State()
        var ready: ReadyCallback?
        /// The response head (encoded) and the body, until `run` takes them.
        var start: (head: [UInt8], body: SourcedBody)?
    }

    private let guarded: Locked<Guarded>

    /// The source's callback, held by reference: taken out of the lock (a generic
    /// `withLock`) a bare closure was reabstracted there and back, two thunk
    /// allocations per flush, that is per write to a subscriber (issue 27, bench/request-path.md).
    private final class ReadyCallback: Sendable {
        let notify: @Sendable () -> Void

        init(_ notify: @escaping @Sendable () -> Void) {
            self.notify = notify
        }
    }

    init(stream: ResponseStream, head: [UInt8], body: SourcedBody) {
        self.stream = stream
        self.source = body.source
        guarded = Locked(Guarded(start: (head, body)))
    }

    var connection: Connection { stream.connection }

    /// The stream's whole life, in the connection's task: the response head (already
    /// encoded), the body's prelude and whatever the source has at once go out in one
    /// write; then the loop writes and this task waits for hand-overs. Called once.
    ///
    /// The async frames here stay small on purpose: the runtime keeps a task's
    /// allocator slabs until the task ends, so whatever this chain once reached an
    /// idle subscriber holds for hours. Building the first write is synchronous, the
    /// common first write never waits (`writeAvailable`), and the waiting loop
    /// (`pumpFrames`) holds only what a hand-over needs.
    func run() async {
        let (first, endsAt) = start()
        await withTaskCancellationHandler {
            guard let endsAt else { return await pumpFrames(first) }
            await pumpFrames(first, until: endsAt)
        } onCancel: {
            end()
        }
    }

    /// Sets the stream up and makes the first write (synchronous, so none of it
    /// stays in the task's frames); when the stream ends by itself.
    private func start() -> (FirstWrite?, ContinuousClock.Instant?) {
        // Strong captures, no weak reference (which would give the pump a side table
        // and every retain of it the slow path). The cycles they make end with the
        // stream: `end` drops `ready` here and cancels the source (which drops its
        // copy); closing the connection drops the hang-up handler.
        let ready: @Sendable () -> Void = { self.sourceIsReady() }
        guard let (head, body) = guarded.withLock({ guarded in
            guarded.ready = ReadyCallback(ready)
            return guarded.start.take()
        }) else { preconditionFailure("a stream pump run twice") }
        body.started?(stream)
        stream.onPeerClosed { self.end() }
        return (firstWrite(head: head, prelude: body.prelude, ready: ready), body.endsAt)
    }

    /// The first write: the head, the prelude and what the source has now, as
    /// written so far without waiting.
    private struct FirstWrite: Sendable {
        var rest: Handover?
        var finished: Bool
    }

    /// Builds and writes the first write, without waiting (the socket of a new
    /// stream almost always takes it at once); what it did not take is `rest`.
    private func firstWrite(head: [UInt8], prelude: [UInt8], ready: @escaping @Sendable () -> Void) -> FirstWrite? {
        var first = [head]
        var batch: StreamBatch?
        var finished = false
        switch source.take(orNotify: ready) {
        case .batch(let taken):
            batch = taken
            first += stream.framed([prelude] + taken.chunks)
        case .pending:
            first += stream.framed([prelude])
        case .finished:
            first += stream.framed([prelude])
            finished = true
        }
        var position = WritePosition(chunks: first)
        do {
            guard try connection.writeAvailable(first, at: &position) == .done else {
                return FirstWrite(rest: Handover(chunks: first, position: position, batch: batch), finished: finished)
            }
        } catch {
            return nil
        }
        if let batch { source.written(batch, at: .now) }
        return FirstWrite(rest: nil, finished: finished)
    }

    /// `pumpFrames`, ended when `endsAt` passes (a token's expiry).
    @inline(never)
    private func pumpFrames(_ first: FirstWrite?, until endsAt: ContinuousClock.Instant) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                try? await Task.sleep(until: endsAt, clock: .continuous)
                if !Task.isCancelled { self.end() }
            }
            await pumpFrames(first)
            group.cancelAll()
        }
    }

    /// Finishes the first write, then waits for hand-overs until the stream ends.
    @inline(never)
    private func pumpFrames(_ first: FirstWrite?) async {
        guard let first else { return end() }
        if let rest = first.rest, await !writeRest(rest) { return end() }
        if first.finished { return end() }
        while guarded.withLock({ $0.pump.rearm() }) {
            connection.loop.atTurnEnd(self)
            let event = await withCheckedContinuation { continuation in park(continuation) }
            // The loop decided this event under the lock and resumed the task after
            // releasing it: taking the lock once here orders what the loop did
            // before that release before whatever comes next, in a way
            // ThreadSanitizer sees (the runtime orders it already).
            guarded.withLock { _ in }
            guard case .write(let rest) = event else { return }
            guard await writeRest(rest) else { return end() }
        }
    }

    /// Parks the task until the loop hands it something or the stream ends (at once
    /// if that already happened). Not inlined, so its temporaries stay off the task.
    @inline(never)
    private func park(_ continuation: CheckedContinuation<StreamPumpEvent<Handover>, Never>) {
        if let event = guarded.withLock({ $0.pump.wait(continuation) }) { continuation.resume(returning: event) }
    }

    /// Writes what the socket did not take at once, waiting for writability; false
    /// when the connection failed.
    @inline(never)
    private func writeRest(_ rest: Handover) async -> Bool {
        var position = rest.position
        do {
            try await connection.write(rest.chunks, from: &position)
        } catch {
            return false
        }
        if let batch = rest.batch { source.written(batch, at: .now) }
        return true
    }

    /// At the end of a loop turn: takes what the source has and writes it now, until
    /// the source has nothing (armed again) or the socket would block (the task
    /// takes over).
    func runAtTurnEnd() {
        let ready = guarded.withLock { guarded in guarded.pump.beginFlush() ? guarded.ready : nil }
        guard let ready else { return }
        while true {
            switch source.take(orNotify: ready.notify) {
            case .pending:
                if guarded.withLock({ $0.pump.tookNothing() }) == .stop { return }
            case .finished:
                return end()
            case .batch(let batch):
                let outcome: BatchWrite
                do {
                    outcome = try writeNow(batch)
                } catch {
                    return end()
                }
                if case .blocked(let chunks, let position) = outcome {
                    connection.counters?.streamWritesBlocked.add(1, ordering: .relaxed)
                    let rest = Handover(chunks: chunks, position: position, batch: batch)
                    // Resumed after the lock is released (nothing resumes under it).
                    if let (task, event) = guarded.withLock({ $0.pump.handOver(rest) }) {
                        task.resume(returning: event)
                    }
                    return
                }
                source.written(batch, at: .now)
            }
        }
    }

    private func sourceIsReady() {
        if guarded.withLock({ $0.pump.sourceIsReady() }) { connection.loop.atTurnEnd(self) }
    }

    /// Ends the stream (idempotent): the task goes on to finish the response, and
    /// the source lets go of what feeds it (a no-op when it is what finished).
    private func end() {
        let (first, task) = guarded.withLock { guarded in
            guarded.ready = nil
            return guarded.pump.end()
        }
        task?.resume(returning: .ended)
        if first { source.cancel() }
    }
}
