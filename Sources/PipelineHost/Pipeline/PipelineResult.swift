/// What a finished request gives back.
public struct PipelineResult: Sendable {
    /// Where the time of one stage went.
    public struct StageTiming: Sendable {
        /// The stage's name.
        public let stage: String
        /// Time spent waiting for a transfer or CPU slot before the stage ran.
        public let waited: Duration
        /// Time the stage itself ran.
        public let duration: Duration

        /// A timing of `duration`, after waiting `waited` for a slot.
        public init(stage: String, waited: Duration = .zero, duration: Duration) {
            self.stage = stage
            self.waited = waited
            self.duration = duration
        }
    }

    /// The request this result answers.
    public let request: ImageRequest
    /// The source as the key stages left it; `source` and the keys are made from it on demand.
    let origin: Source
    let stageKey: StageKey
    /// The source with credentials redacted (`Source.redacted`).
    public var source: String { origin.redacted }
    /// The stable key of the source alone (after key stages such as normalize).
    public var sourceKey: String { origin.key }
    /// The stable key: normalized source plus every stage identity. Equal keys mean equal output.
    public var key: String { stageKey.description }
    /// The encoded output.
    public let bytes: ImageBytes
    /// "jpeg", "png", ... when known.
    public let format: String?
    /// The output's pixel size, when known.
    public let size: PixelSize?
    /// The source image's pixel size, when known.
    public let sourceSize: PixelSize?
    /// Every stage in order. Stages shared with other requests show the shared work's times.
    public let timings: [StageTiming]
    /// This request joined work already running for another request, at some stage.
    public let coalesced: Bool
    /// A cache stage answered from memory, so the stages before it did not run.
    public let memoryHit: Bool
    /// A cache stage answered from disk.
    public let diskHit: Bool
    /// A cache stage answered from a tier after disk: one shared between processes (Redis).
    public let sharedHit: Bool
    /// With `sharedHit`: the name of the tier that answered, "shared" (Redis) or "store" (the
    /// object store).
    public let sharedTier: String?
    /// Served from an entry past its freshness: offline, or the last good image after a
    /// failure (`on_error = "stale"`).
    public let stale: Bool
    /// When the result stops being fresh (seconds since 1970), from the origin's Cache-Control
    /// and the cache stages' TTLs; nil when nothing said.
    public let expiresAt: Double?
    /// The origin said Cache-Control: no-store, so nothing made from it may be kept.
    public let noStore: Bool

    /// Time in stages plus time queued for them.
    public var duration: Duration { timings.reduce(.zero) { $0 + $1.duration + $1.waited } }

    /// The source's longest side is more than 4 times the output's: a smaller source would do.
    public var isOversized: Bool {
        guard let size, let sourceSize else { return false }
        return max(sourceSize.width, sourceSize.height) > 4 * max(size.width, size.height)
    }
}

extension PipelineResult {
    /// The tier that answered: "memory", "disk", "shared", "store", or "none" when the work ran.
    var cacheTier: String {
        if memoryHit { return "memory" }
        if diskHit { return "disk" }
        if sharedHit { return sharedTier ?? "shared" }
        return "none"
    }
}

extension Result {
    /// The error of a failure; nil for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
