/// The sandbox's caps. An infinite loop or a huge table becomes an error, not a hang.
public struct ProfileLimits: Sendable {
    /// Memory the script may allocate, in bytes.
    public var memoryBytes: Int
    /// Lua instructions the script may run.
    public var instructions: Int64
    /// Seconds the script may run.
    public var seconds: Double

    /// Limits of 32 MB, 20 million instructions and 1 second by default.
    public init(memoryBytes: Int = 32 << 20, instructions: Int64 = 20_000_000, seconds: Double = 1) {
        self.memoryBytes = memoryBytes
        self.instructions = instructions
        self.seconds = seconds
    }
}
