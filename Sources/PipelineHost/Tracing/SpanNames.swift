/// The names of the pipeline's spans and attributes, in one place: docs/SERVE.md's "Tracing"
/// lists them, and tests read traces by them.
public enum SpanNames {
    /// A request through `Pipeline.image`: the root of a `run` source's trace, a child of
    /// serve's server span.
    public static let image = "pipeline.image"
    /// A piece of running work, one step of a chain: `work fetch`, `work decode`. A request that
    /// joins it links to it; it counts the waiters it answered.
    public static func work(_ stage: String) -> String { "work " + stage }
    /// A stage run, once its input is there and it has its slot: `fetch`, `decode`.
    public static func stage(_ stage: String) -> String { stage }
    /// A wait for work already running on this node: `join fetch`, linked to its `work` span.
    public static func join(_ stage: String) -> String { "join " + stage }
    /// A lookup in one cache tier: `cache memory`, `cache disk`, `cache shared` (Redis), `cache store`.
    public static func cache(_ tier: String) -> String { "cache " + tier }
    /// A wait for a free slot of a lane: `queue transfers`, `queue cpu`.
    public static func queue(_ lane: String) -> String { "queue " + lane }
    /// A wait for another node's work through a Redis lease, linked to that node's `work` span.
    public static let leaseWait = "lease wait"

    /// The profile a request runs.
    public static let profile = "pipelinehost.profile"
    /// The request's source, redacted.
    public static let source = "pipelinehost.source"
    /// Where the answer came from: memory, disk, shared, store, or none (made now).
    public static let cacheResult = "pipelinehost.cache"
    /// A cache span's tier.
    public static let cacheTier = "pipelinehost.cache.tier"
    /// A cache span's outcome: hit, miss, stale or corrupt.
    public static let lookup = "pipelinehost.cache.lookup"
    /// The stage a work, stage or join span is about.
    public static let stageName = "pipelinehost.stage"
    /// How many requests a work span answered (the one that started it included).
    public static let waiters = "pipelinehost.waiters"
    /// A lease wait's outcome: entry (the other node stored it), failed, lead or alone.
    public static let leaseOutcome = "pipelinehost.lease.outcome"
    /// The kind of a failure (`PipelineError.Kind`'s name), on the span that failed.
    public static let errorKind = "pipelinehost.error"
}
