extension Actor {
    /// `body(self, arguments)`, isolated to this actor, run at once on the calling thread
    /// when `executor` (this actor's own executor, which the caller passes) says the
    /// thread is isolated to it; nil elsewhere, where the caller must hop.
    ///
    /// What `assumeIsolated` does, with one check instead of three: it asks the runtime
    /// which executor is current (a connection's task runs on its loop as a task executor,
    /// not as the actor's), which then asks `executor` the same question again; and an
    /// isolated closure passed to a standard library function checks once more at its
    /// entry. The three were about 650 instructions of a 32,000-instruction publish
    /// request (issue 27). `body` should capture nothing (its inputs come as `arguments`):
    /// then it has no context to allocate, where `assumeIsolated`'s closure took two
    /// allocations a call. Inlinable so that calls from another module (the cluster
    /// engine) are specialized: unspecialized, `body` must be re-abstracted to the
    /// generic signature, a thunk with an allocated context at every call.
    @inlinable @inline(__always)
    package nonisolated func runInPlace<Arguments: Sendable, T: Sendable>(
        isolatedBy executor: any SerialExecutor, _ arguments: Arguments,
        _ body: @escaping (isolated Self, Arguments) -> T
    ) -> T? {
        guard executor.isIsolatingCurrentContext() == true else { return nil }
        return assumeIsolatedUnchecked(arguments, body)
    }

    /// `body(self, arguments)`, isolated to this actor, run at once, with no check at all.
    /// Only for a caller that already knows it is isolated to this actor's executor: after
    /// the executor said so (`runInPlace`), or from another actor that shares it (the
    /// cluster engine and its hub). Sound there: an executor that isolates the calling
    /// thread runs none of the actor's jobs while `body` runs, which is all isolation
    /// promises; `body` is called once, here, and its result is `Sendable`. Debug builds
    /// (the tests) check it anyway, as `assumeIsolated` would.
    @inlinable @inline(__always)
    package nonisolated func assumeIsolatedUnchecked<Arguments: Sendable, T: Sendable>(
        _ arguments: Arguments, _ body: @escaping (isolated Self, Arguments) -> T
    ) -> T {
        #if DEBUG
        preconditionIsolated("run in place off the actor's executor")
        #endif
        // The standard library's `assumeIsolated` makes the same cast after its check:
        // an `isolated` parameter is an ordinary parameter in the calling convention.
        return unsafeBitCast(body, to: ((Self, Arguments) -> T).self)(self, arguments)
    }
}
