import PipelineHost

/// An image origin held in memory, for tests of the pipeline's own logic (sharing, cancellation,
/// priorities, cache order) with no network and no image library: what the fake `fetch` stage
/// of `FakeStages` reads. It counts what was asked of it, and can hold a path until the test
/// releases it, so a test can look at the pipeline while work is in flight.
public final class FakeOrigin: Sendable {
    private struct State {
        var bodies: [String: [UInt8]] = [:]
        var maxAges: [String: Double] = [:]
        var failures: [String: PipelineError] = [:]
        var held: Set<String> = []
        var openGates: Set<String> = []
        /// Continuations waiting for a held path's release or a gate's opening, by name.
        var waiting: [String: [Int: CheckedContinuation<Bool, Never>]] = [:]
        var lastWaiter = 0
        var started: [String: Int] = [:]
        var finished: [String: Int] = [:]
        var cancelled: [String: Int] = [:]
        var order: [String] = []
        /// Callers of `wait(for:until:)` whose condition did not hold yet.
        var watchers:
            [Int: (
                path: String, condition: @Sendable (Fetches) -> Bool, continuation: CheckedContinuation<Void, Never>
            )] = [:]

        func fetches(_ path: String) -> Fetches {
            Fetches(
                started: started[path, default: 0], finished: finished[path, default: 0],
                cancelled: cancelled[path, default: 0])
        }

        /// Takes out the watchers of `path` whose condition now holds, to be resumed.
        mutating func satisfiedWatchers(of path: String) -> [CheckedContinuation<Void, Never>] {
            let now = fetches(path)
            let ready = watchers.filter { $0.value.path == path && $0.value.condition(now) }
            for id in ready.keys { watchers[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    /// What the origin has seen of one path.
    public struct Fetches: Sendable, Equatable {
        /// Fetches that started.
        public var started: Int
        /// Fetches that returned.
        public var finished: Int
        /// Fetches cancelled while held.
        public var cancelled: Int
    }

    private let state = Locked(State())

    /// An origin that serves nothing yet.
    public init() {}

    /// Serves `bytes` at `path` (the part of a source after its host, such as "/a.jpg"), fresh
    /// for `maxAge` seconds when given (as `Cache-Control: max-age` would say).
    public func serve(_ path: String, _ bytes: [UInt8] = Array("image".utf8), maxAge: Double? = nil) {
        state.withLock {
            $0.bodies[path] = bytes; $0.maxAges[path] = maxAge; $0.failures[path] = nil
        }
    }

    /// Answers `path` with `error`.
    public func fail(_ path: String, with error: PipelineError) {
        state.withLock { $0.failures[path] = error }
    }

    /// Fetches of `path` wait until `release(path)`.
    public func hold(_ path: String) { state.withLock { _ = $0.held.insert(path) } }
    /// Lets held fetches of `path` go on.
    public func release(_ path: String) {
        let waiters = state.withLock { state in
            state.held.remove(path)
            return state.waiting.removeValue(forKey: "path " + path) ?? [:]
        }
        for waiter in waiters.values { waiter.resume(returning: true) }
    }

    /// Lets every fake `decode { gate = name }` waiting, and to come, go on.
    public func open(gate: String) {
        let waiters = state.withLock { state in
            state.openGates.insert(gate)
            return state.waiting.removeValue(forKey: "gate " + gate) ?? [:]
        }
        for waiter in waiters.values { waiter.resume(returning: true) }
    }

    /// Waits, on an event rather than a clock, until `name` is no longer blocked; false when the
    /// task was cancelled first.
    private func wait(_ name: String, blocked: @escaping @Sendable (State) -> Bool) async -> Bool {
        let id = state.withLock { state in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let passes: Bool? = state.withLock { state in
                    guard !Task.isCancelled else { return false }
                    guard blocked(state) else { return true }
                    state.waiting[name, default: [:]][id] = continuation
                    return nil
                }
                if let passes { continuation.resume(returning: passes) }
            }
        } onCancel: {
            state.withLock { $0.waiting[name]?.removeValue(forKey: id) }?.resume(returning: false)
        }
    }

    /// What the fake decode stage does with `decode { gate = name }`: waits until it is open.
    func waitForGate(_ gate: String) async throws {
        guard await wait("gate " + gate, blocked: { !$0.openGates.contains(gate) }) else {
            throw PipelineError.cancelled("fake decode cancelled at its gate")
        }
    }

    /// Returns once `condition` holds for the fetches of `path` (at once if it holds now): the
    /// event a test waits on, instead of polling the counts against a clock.
    public func wait(for path: String, until condition: @escaping @Sendable (Fetches) -> Bool) async {
        await withCheckedContinuation { continuation in
            let holds = state.withLock { state in
                guard !condition(state.fetches(path)) else { return true }
                state.lastWaiter += 1
                state.watchers[state.lastWaiter] = (path, condition, continuation)
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// Counts one event of `path` and answers the watchers it satisfies.
    private func count(_ path: String, _ event: (inout State) -> Void) {
        let ready = state.withLock { state in
            event(&state)
            return state.satisfiedWatchers(of: path)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Fetches of `path` that started, that returned, and that were cancelled while held.
    public func started(_ path: String) -> Int { state.withLock { $0.started[path, default: 0] } }
    /// Fetches of `path` that returned.
    public func finished(_ path: String) -> Int { state.withLock { $0.finished[path, default: 0] } }
    /// Fetches of `path` cancelled while held.
    public func cancelled(_ path: String) -> Int { state.withLock { $0.cancelled[path, default: 0] } }
    /// Paths in the order their fetches started.
    public var order: [String] { state.withLock { $0.order } }

    /// What the fake fetch stage does with one path: the body, and its max-age if it has one.
    func fetch(_ path: String) async throws -> (body: [UInt8], maxAge: Double?) {
        count(path) {
            $0.started[path, default: 0] += 1
            $0.order.append(path)
        }
        guard await wait("path " + path, blocked: { $0.held.contains(path) }) else {
            count(path) { $0.cancelled[path, default: 0] += 1 }
            throw PipelineError.cancelled("fake transfer cancelled")
        }
        let answer: Result<(body: [UInt8], maxAge: Double?), PipelineError> = state.withLock { state in
            if let failure = state.failures[path] { return .failure(failure) }
            guard let body = state.bodies[path] else {
                return .failure(PipelineError(.invalidSource, "nothing at \(path)"))
            }
            return .success((body, state.maxAges[path]))
        }
        if case .success = answer { count(path) { $0.finished[path, default: 0] += 1 } }
        return try answer.get()
    }
}
