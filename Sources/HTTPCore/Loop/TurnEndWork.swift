/// Work the event loop runs on its thread at the end of a turn (`EventLoop.atTurnEnd`).
protocol TurnEndWork: AnyObject, Sendable {
    func runAtTurnEnd()
}
