/// The tasks a cache tier starts and returns before they finish (stores, lease releases, lease
/// extenders, grace timers), owned so that `drain()` can wait for every one of them: a tier's
/// drain then means "nothing of mine is still running", which a shutdown relies on.
///
/// A task started with `untilDrain: true` is one that would otherwise wait (a timer, a renewal
/// loop): drain cancels it, and waits for what it does on the way out.
public final class BackgroundWork: Sendable {
    private struct State {
        var running: [Int: Task<Void, Never>] = [:]
        var cancelledByDrain: Set<Int> = []
        var next = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Nothing running yet.
    public init() {}

    /// Starts `body` in a task of its own that `drain()` waits for (and cancels first, with
    /// `untilDrain`). Returns the task, so its owner can cancel it sooner.
    @discardableResult
    public func run(untilDrain: Bool = false, _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        state.withLock { state in
            let id = state.next
            state.next += 1
            if untilDrain { state.cancelledByDrain.insert(id) }
            // Registered under the lock before it can finish, so `finished(id)` always finds it.
            let task = Task { [self] in
                await body()
                finished(id)
            }
            state.running[id] = task
            return task
        }
    }

    /// How many tasks are still running.
    public var count: Int { state.withLock { $0.running.count } }

    /// Cancels the tasks that wait until a drain, then returns once every task has finished.
    public func drain() async {
        let timers = state.withLock { state in state.cancelledByDrain.compactMap { state.running[$0] } }
        for timer in timers { timer.cancel() }
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard !state.running.isEmpty else { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func finished(_ id: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running[id] = nil
            state.cancelledByDrain.remove(id)
            guard state.running.isEmpty else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
