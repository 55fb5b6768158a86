import PipelineHost

/// A third-party-style plugin for tests: `hold { gate = "name" }` passes its image through
/// once the test opens the gate. It takes a CPU slot like any pixel stage, so a test can keep
/// the CPU queue busy for exactly as long as it wants.
public enum HoldPlugin: PipelinePlugin {
    private static let openGates = Locked(Set<String>())
    private static let entered = Locked([String: Int]())

    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(StageDefinition(
            name: "hold", summary: "Wait for a test gate, then pass the image on.",
            input: .image, output: .image,
            parameters: [ParameterSpec("gate", .string, default: .string("hold"), doc: "the gate to wait for")],
            make: { HoldStage(gate: $0.string("gate")!) }))
    }

    public static func open(_ gate: String) { openGates.withLock { _ = $0.insert(gate) } }

    /// How many times a stage started waiting at `gate`.
    public static func enteredCount(_ gate: String) -> Int { entered.withLock { $0[gate, default: 0] } }

    struct HoldStage: Stage {
        let gate: String

        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
            HoldPlugin.entered.withLock { $0[gate, default: 0] += 1 }
            while !HoldPlugin.openGates.withLock({ $0.contains(gate) }) {
                try await Task.sleep(for: .milliseconds(5))
            }
            return input
        }
    }
}

/// Polls `condition` until it holds or `seconds` pass. For waiting on the state of concurrent
/// work (a request queued, a transfer started); never for timing assertions.
public func eventually(within seconds: Double = 20, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
