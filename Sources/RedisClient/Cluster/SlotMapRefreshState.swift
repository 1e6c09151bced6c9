/// The bookkeeping of `SlotMapSource`, without locks or tasks: who waits for
/// which fetch. Methods decide and return what to do; the owner does it after
/// releasing its lock.
///
/// Promises: at most one fetch runs at a time; a caller asking while one runs
/// waits for the next one (started when the running one ends), never for one
/// that began before it asked (that one may predate the redirection that made
/// the caller ask); every waiter is handed exactly one outcome.
struct SlotMapRefreshState<Waiter> {
    private var running = false
    /// Waiting for the fetch that runs now.
    private var current: [Waiter] = []
    /// Waiting for the fetch after it.
    private var next: [Waiter] = []
    private(set) var map: SlotMap?
    private(set) var fetches: UInt64 = 0

    init(map: SlotMap? = nil) {
        self.map = map
    }

    /// A caller asks for a fresh map; true when it must start the fetch (none ran).
    mutating func request(_ waiter: Waiter) -> Bool {
        if running {
            next.append(waiter)
            return false
        }
        running = true
        fetches += 1
        current.append(waiter)
        return true
    }

    /// A fetch ended: the waiters to hand `outcome`, and whether another fetch
    /// must start at once (someone asked meanwhile).
    mutating func finished(_ outcome: Result<SlotMap, RedisError>) -> (resume: [Waiter], fetchAgain: Bool) {
        precondition(running, "a fetch ended that was not running")
        if case .success(let fresh) = outcome { map = fresh }
        let done = current
        current = next
        next = []
        running = !current.isEmpty
        if running { fetches += 1 }
        return (done, running)
    }
}
