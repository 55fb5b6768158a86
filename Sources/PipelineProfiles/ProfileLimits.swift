/// The sandbox's caps. An infinite loop or a huge table becomes an error, not a hang.
public struct ProfileLimits: Sendable {
    public var memoryBytes: Int
    public var instructions: Int64
    public var seconds: Double

    public init(memoryBytes: Int = 32 << 20, instructions: Int64 = 20_000_000, seconds: Double = 1) {
        self.memoryBytes = memoryBytes
        self.instructions = instructions
        self.seconds = seconds
    }
}
