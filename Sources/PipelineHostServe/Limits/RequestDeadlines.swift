import PipelineHost

/// Every request's time budget (`--request-timeout`), kept by one task for the whole service: it
/// sleeps until the earliest deadline and expires what has passed it. A sleeping task per
/// request cost more than its wake-ups: a cancelled `Task.sleep` leaves its timer queued until
/// it would have fired, so at 10,000 memory hits a second and a 30 s budget some 300,000 of
/// them (90 MB) were queued at any time.
///
/// Every budget of one service is the same, so a new deadline is never earlier than those the
/// task already sleeps towards, and the task never sleeps past one.
final class RequestDeadlines: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var lastID = 0
        /// Whether the task runs; it ends when no deadline is left, and the next one starts it.
        var sweeping = false
    }

    private let state = Locked(State())

    /// Deadlines not yet finished or expired.
    var count: Int { state.withLock { $0.entries.count } }

    /// Starts a budget of `budget`: past it, `expire` is called once, unless `finish` came first.
    func start(_ budget: Duration, expire: @escaping @Sendable () -> Void) -> Int {
        let (id, startSweeper) = state.withLock { state in
            state.lastID += 1
            state.entries[state.lastID] = Entry(deadline: .now + budget, expire: expire)
            defer { state.sweeping = true }
            return (state.lastID, !state.sweeping)
        }
        if startSweeper { Task { await sweep() } }
        return id
    }

    /// The request ended within its budget.
    func finish(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Expires what has passed its deadline, then sleeps until the earliest one left.
    private func sweep() async {
        while true {
            let (expired, next) = state.withLock { state -> ([Entry], ContinuousClock.Instant?) in
                let now = ContinuousClock.now
                let expired = state.entries.filter { $0.value.deadline <= now }
                for id in expired.keys { state.entries[id] = nil }
                let next = state.entries.values.map(\.deadline).min()
                if next == nil { state.sweeping = false }
                return (Array(expired.values), next)
            }
            for entry in expired { entry.expire() }
            guard let next else { return }
            try? await Task.sleep(until: next)
        }
    }
}
