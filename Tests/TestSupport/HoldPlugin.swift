import PipelineHost

/// A third-party-style plugin for tests: `hold { gate = "name" }` passes its image through
/// once the test opens the gate. It takes a CPU slot like any pixel stage, so a test can keep
/// the CPU queue busy for exactly as long as it wants.
public enum HoldPlugin: PipelinePlugin {
    private struct Gates {
        var open: Set<String> = []
        var waiting: [String: [Int: CheckedContinuation<Void, Never>]] = [:]
        var entered: [String: Int] = [:]
        var lastID = 0
    }
    private static let gates = Locked(Gates())

    static let gate = Parameter<String>("gate", .string, default: "hold", doc: "the gate to wait for")

    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(StageDefinition(
            name: "hold", summary: "Wait for a test gate, then pass the image on.",
            input: .image, output: .image,
            parameters: [gate.spec],
            make: { HoldStage(gate: $0[gate]) }))
    }

    /// Opens `gate`: stages waiting there go on at once, and later ones do not wait.
    public static func open(_ gate: String) {
        let waiting = gates.withLock { gates in
            gates.open.insert(gate)
            return gates.waiting.removeValue(forKey: gate) ?? [:]
        }
        for continuation in waiting.values { continuation.resume() }
    }

    /// How many times a stage started waiting at `gate`.
    public static func enteredCount(_ gate: String) -> Int { gates.withLock { $0.entered[gate, default: 0] } }

    struct HoldStage: Stage {
        let gate: String

        /// Waits for the gate's event, not on a clock; a cancelled stage stops waiting.
        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
            let id = HoldPlugin.gates.withLock { gates in
                gates.lastID += 1
                return gates.lastID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let passes = HoldPlugin.gates.withLock { gates in
                        gates.entered[gate, default: 0] += 1
                        guard !gates.open.contains(gate), !Task.isCancelled else { return true }
                        gates.waiting[gate, default: [:]][id] = continuation
                        return false
                    }
                    if passes { continuation.resume() }
                }
            } onCancel: {
                HoldPlugin.gates.withLock { $0.waiting[gate]?.removeValue(forKey: id) }?.resume()
            }
            try context.checkCancellation()
            return input
        }
    }
}

/// Polls `condition` until it holds or `seconds` pass, for states that publish no event (a
/// server's request count, a file). A pipeline's own state has one: `waitForActivity`. The
/// deadline is only a backstop against a hang, far past any wait a loaded machine makes; never
/// for timing assertions.
public func eventually(within seconds: Double = 120, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
