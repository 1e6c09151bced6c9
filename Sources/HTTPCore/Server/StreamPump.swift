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

    /// A batch the socket did not take at once, and where it stopped.
    struct Handover: Sendable {
        let chunks: [[UInt8]]
        let position: WritePosition
        let batch: StreamBatch
    }

    private let stream: ResponseStream
    private let source: any StreamSource
    /// The pump's phase, and the callback the source calls when it has frames
    /// (made once per stream, when it starts).
    private struct Guarded {
        var pump = State()
        var ready: (@Sendable () -> Void)?
    }

    private let guarded = Locked(Guarded())

    init(stream: ResponseStream, source: any StreamSource) {
        self.stream = stream
        self.source = source
    }

    private var connection: Connection { stream.connection }

    /// The stream's whole life, in the connection's task: `head` (the response head,
    /// already encoded), `body.prelude` and whatever the source has at once go out in
    /// one write; then the loop writes and this task waits for hand-overs.
    func run(head: [UInt8], body: SourcedBody) async {
        let ready: @Sendable () -> Void = { [weak self] in self?.sourceIsReady() }
        guarded.withLock { $0.ready = ready }
        body.started?(stream)
        stream.onPeerClosed { [weak self] in self?.end() }
        await withTaskCancellationHandler {
            guard let endsAt = body.endsAt else { return await pumpFrames(head: head, prelude: body.prelude, ready: ready) }
            await withDiscardingTaskGroup { group in
                group.addTask { [weak self] in
                    try? await Task.sleep(until: endsAt, clock: .continuous)
                    if !Task.isCancelled { self?.end() }
                }
                await pumpFrames(head: head, prelude: body.prelude, ready: ready)
                group.cancelAll()
            }
        } onCancel: {
            end()
        }
    }

    private func pumpFrames(head: [UInt8], prelude: [UInt8], ready: @escaping @Sendable () -> Void) async {
        var first = [head]
        var firstBatch: StreamBatch?
        var finished = false
        switch source.take(orNotify: ready) {
        case .batch(let batch):
            firstBatch = batch
            first += stream.framed([prelude] + batch.chunks)
        case .pending:
            first += stream.framed([prelude])
        case .finished:
            first += stream.framed([prelude])
            finished = true
        }
        do {
            try await connection.write(first)
        } catch {
            return end()
        }
        if let firstBatch { source.written(firstBatch, at: .now) }
        if finished { return end() }
        while guarded.withLock({ $0.pump.rearm() }) {
            connection.loop.atTurnEnd(self)
            let event = await withCheckedContinuation { continuation in
                if let event = guarded.withLock({ $0.pump.wait(continuation) }) { continuation.resume(returning: event) }
            }
            // The loop resumed this task inside the lock: taking it once orders what
            // the loop wrote before whatever comes next, in a way ThreadSanitizer
            // sees (the runtime orders it already; as `PipelineCore`'s fence).
            guarded.withLock { _ in }
            guard case .write(let rest) = event else { return }
            var position = rest.position
            do {
                try await connection.write(rest.chunks, from: &position)
            } catch {
                return end()
            }
            source.written(rest.batch, at: .now)
        }
    }

    /// At the end of a loop turn: takes what the source has and writes it now, until
    /// the source has nothing (armed again) or the socket would block (the task
    /// takes over).
    func runAtTurnEnd() {
        let ready = guarded.withLock { guarded in guarded.pump.beginFlush() ? guarded.ready : nil }
        guard let ready else { return }
        while true {
            switch source.take(orNotify: ready) {
            case .pending:
                if guarded.withLock({ $0.pump.tookNothing() }) == .stop { return }
            case .finished:
                return end()
            case .batch(let batch):
                let chunks = stream.framed(batch.chunks)
                var position = WritePosition(chunks: chunks)
                let progress: Connection.WriteProgress
                do {
                    progress = try connection.writeAvailable(chunks, at: &position)
                } catch {
                    return end()
                }
                guard progress == .done else {
                    connection.counters?.streamWritesBlocked.add(1, ordering: .relaxed)
                    let rest = Handover(chunks: chunks, position: position, batch: batch)
                    guarded.withLock { guarded in
                        if let (task, event) = guarded.pump.handOver(rest) { task.resume(returning: event) }
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
        let first = guarded.withLock { guarded in
            let (first, task) = guarded.pump.end()
            task?.resume(returning: .ended)
            return first
        }
        if first { source.cancel() }
    }
}
