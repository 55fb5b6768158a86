/// What a pipeline has done since it was made: a snapshot from `Pipeline.stats()`.
public struct PipelineStats: Sendable, Equatable {
    /// Requests received by `image(for:)`, and how they ended.
    public var requests = 0
    public var succeeded = 0
    public var failed = 0
    public var cancelled = 0
    /// Succeeded requests that joined work already running for another request, at any step.
    public var coalesced = 0
    /// Transfers actually started (fetch-role stages run), and the bytes they returned.
    public var fetches = 0
    public var bytesFetched = 0
    /// Images opened from encoded bytes, and the time spent in decode-role stages.
    public var decodes = 0
    public var decodeTime: Duration = .zero
    /// Served from the memory or disk cache. The cache stage is not built yet, so these stay 0.
    public var memoryHits = 0
    public var diskHits = 0
    /// Distinct pieces of work running or queued now, and the most there ever were.
    public var inFlight = 0
    public var inFlightPeak = 0
    /// Results whose source's longest side is more than 4 times the output's: a smaller
    /// source would have done.
    public var oversizedSources = 0

    public init() {}

    public var averageDecodeMilliseconds: Double {
        decodes == 0 ? 0 : decodeTime.milliseconds / Double(decodes)
    }

    /// The figures as (snake_case name, number) pairs, in a stable order: the `--stats` JSON.
    public var fields: [(name: String, value: Double)] {
        [
            ("requests", Double(requests)), ("succeeded", Double(succeeded)), ("failed", Double(failed)),
            ("cancelled", Double(cancelled)), ("coalesced", Double(coalesced)), ("fetches", Double(fetches)),
            ("bytes_fetched", Double(bytesFetched)), ("decodes", Double(decodes)),
            ("decode_ms_avg", (averageDecodeMilliseconds * 100).rounded() / 100),
            ("memory_hits", Double(memoryHits)), ("disk_hits", Double(diskHits)),
            ("in_flight", Double(inFlight)), ("in_flight_peak", Double(inFlightPeak)),
            ("oversized_sources", Double(oversizedSources)),
        ]
    }
}

extension Duration {
    /// The duration in (fractional) milliseconds.
    public var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
