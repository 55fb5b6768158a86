/// What a finished request gives back.
public struct PipelineResult: Sendable {
    public struct StageTiming: Sendable {
        public let stage: String
        public let duration: Duration
    }

    public let request: ImageRequest
    /// The source with credentials redacted.
    public let source: String
    /// The stable key of the source alone (after key stages such as normalize).
    public let sourceKey: String
    /// The stable key: normalized source plus every stage identity. Equal keys mean equal output.
    public let key: String
    public let bytes: ImageBytes
    /// "jpeg", "png", ... when known.
    public let format: String?
    public let size: PixelSize?
    public let sourceSize: PixelSize?
    public let timings: [StageTiming]

    public var duration: Duration { timings.reduce(.zero) { $0 + $1.duration } }
}
