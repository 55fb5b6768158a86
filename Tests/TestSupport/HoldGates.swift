import PipelineHost

/// A third-party-style stage for tests, `hold { gate = "name" }`, which passes its image through
/// once the test opens the gate. It takes a CPU slot like any pixel stage, so a test can keep
/// the CPU queue busy for exactly as long as it wants.
///
/// The gates belong to one test: each test makes its own `HoldGates` and loads its profiles
/// with it (`TestPipeline.load(_:gates:)`), so two tests never share a gate, whatever its name.
public final class HoldGates: Sendable {
    private struct State {
        var open: Set<String> = []
        var waiting: [String: [Int: CheckedContinuation<Void, Never>]] = [:]
        var entered: [String: Int] = [:]
        /// Callers of `waitUntilEntered`, by gate, with the count each waits for.
        var watchers: [String: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)]] = [:]
        var lastID = 0

        mutating func nextID() -> Int {
            lastID += 1
            return lastID
        }
    }

    private let state = Locked(State())

    static let gate = Parameter<String>("gate", .string, default: "hold", doc: "the gate to wait for")

    /// Gates for one test, all closed.
    public init() {}

    /// Registers the `hold` stage, waiting at these gates, the way a plugin registers its stages.
    public func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "hold", summary: "Wait for a test gate, then pass the image on.",
                input: .image, output: .image,
                parameters: [Self.gate.spec],
                make: { [self] in HoldStage(gates: self, gate: $0[Self.gate]) }))
    }

    /// Opens `gate`: stages waiting there go on at once, and later ones do not wait.
    public func open(_ gate: String) {
        let waiting = state.withLock { state in
            state.open.insert(gate)
            return state.waiting.removeValue(forKey: gate) ?? [:]
        }
        for continuation in waiting.values { continuation.resume() }
    }

    /// How many times a stage started waiting at `gate`.
    public func enteredCount(_ gate: String) -> Int { state.withLock { $0.entered[gate, default: 0] } }

    /// Returns once stages have started waiting at `gate` `count` times: an event, not a poll.
    public func waitUntilEntered(_ gate: String, count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state in
                guard state.entered[gate, default: 0] < count else { return true }
                state.watchers[gate, default: [:]][state.nextID()] = (count, continuation)
                return false
            }
            if reached { continuation.resume() }
        }
    }

    /// A stage arrived at `gate`: counts it, and says whether it may pass at once.
    fileprivate func arrive(_ gate: String, id: Int, _ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let (passes, reached) = state.withLock { state in
            state.entered[gate, default: 0] += 1
            let entered = state.entered[gate]!
            let ready = state.watchers[gate, default: [:]].filter { $0.value.count <= entered }
            for id in ready.keys { state.watchers[gate]?[id] = nil }
            guard !state.open.contains(gate), !Task.isCancelled else { return (true, ready.values.map(\.continuation)) }
            state.waiting[gate, default: [:]][id] = continuation
            return (false, ready.values.map(\.continuation))
        }
        for watcher in reached { watcher.resume() }
        return passes
    }

    fileprivate func newID() -> Int { state.withLock { $0.nextID() } }

    /// Waits at `gate` as the `hold` stage does, counted the same: for test doubles other than
    /// stages (a cache tier whose purge a test holds).
    public func pass(_ gate: String) async {
        let id = newID()
        await withCheckedContinuation { continuation in
            if arrive(gate, id: id, continuation) { continuation.resume() }
        }
    }

    fileprivate func leave(_ gate: String, id: Int) {
        state.withLock { $0.waiting[gate]?.removeValue(forKey: id) }?.resume()
    }

    struct HoldStage: Stage {
        let gates: HoldGates
        let gate: String

        /// Waits for the gate's event, not on a clock; a cancelled stage stops waiting.
        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
            let id = gates.newID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if gates.arrive(gate, id: id, continuation) { continuation.resume() }
                }
            } onCancel: {
                gates.leave(gate, id: id)
            }
            try context.checkCancellation()
            return input
        }
    }
}
