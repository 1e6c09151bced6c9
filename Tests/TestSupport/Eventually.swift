/// Polls `condition` until it holds, for at most `seconds`: the tests' one way to wait
/// for something to happen that sends no event of its own (a counter reaching a value,
/// a process's metrics saying so). A test that can wait for an event instead (a
/// stream's next frame, a process's output line, a manual clock's sleeper) does that.
///
/// - Returns: whether `condition` held before the bound ran out (false at once when
///   the task is cancelled); tests `#expect` it, so a wait that times out fails.
public func eventually(upTo seconds: Double, every interval: Duration = .milliseconds(10),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        if try await condition() { return true }
        guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
        // The poll's interval: the one sleep a wait for a condition needs.
        try? await Task.sleep(for: interval)
    }
}
