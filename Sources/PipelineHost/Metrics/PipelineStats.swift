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
    /// Cache lookups and hits, per layer. A memory hit answers before any work starts.
    public var memoryLookups = 0
    public var memoryHits = 0
    public var diskLookups = 0
    public var diskHits = 0
    /// Stale originals the origin confirmed with 304 Not Modified: the stored bytes were reused.
    public var revalidated = 0
    /// Stale entries served: offline, or as the last good image after a failure.
    public var staleServed = 0
    /// Succeeded requests with a stale entry somewhere in them.
    public var staleResults = 0
    /// Disk entries that failed their checksum; each was removed and treated as a miss.
    public var corruptEntries = 0
    /// Entries written to disk, and writes that failed (full disk, permissions).
    public var diskWrites = 0
    public var diskWriteErrors = 0
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
            ("memory_lookups", Double(memoryLookups)), ("memory_hits", Double(memoryHits)),
            ("disk_lookups", Double(diskLookups)), ("disk_hits", Double(diskHits)),
            ("revalidated", Double(revalidated)), ("stale_served", Double(staleServed)),
            ("stale_results", Double(staleResults)), ("corrupt_entries", Double(corruptEntries)),
            ("disk_writes", Double(diskWrites)), ("disk_write_errors", Double(diskWriteErrors)),
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
