/// What a pipeline has done since it was made: a snapshot from `Pipeline.stats()`.
public struct PipelineStats: Sendable, Equatable {
    /// Requests received by `image(for:)`, and how they ended.
    public var requests = 0
    /// Requests that succeeded.
    public var succeeded = 0
    /// Requests that failed, cancellations not included.
    public var failed = 0
    /// Requests cancelled while they waited.
    public var cancelled = 0
    /// Succeeded requests that joined work already running for another request, at any step.
    public var coalesced = 0
    /// Transfers actually started (fetch-role stages run), those that returned bytes, and the
    /// bytes they returned.
    public var fetches = 0
    /// Transfers that returned bytes.
    public var fetchesSucceeded = 0
    /// Bytes those transfers returned.
    public var bytesFetched = 0
    /// Images opened from encoded bytes, and the time spent in decode-role stages.
    public var decodes = 0
    /// Time spent decoding and shrinking on load, in all.
    public var decodeTime: Duration = .zero
    /// Cache lookups and hits, per layer. A memory hit answers before any work starts.
    public var memoryLookups = 0
    /// Lookups that a memory cache answered.
    public var memoryHits = 0
    /// Disk cache lookups.
    public var diskLookups = 0
    /// Lookups that the disk cache answered with a fresh entry.
    public var diskHits = 0
    /// Stale originals the origin confirmed with 304 Not Modified: the stored bytes were reused.
    public var revalidated = 0
    /// Stale entries served: offline, or as the last good image after a failure.
    public var staleServed = 0
    /// Succeeded requests with a stale entry somewhere in them.
    public var staleResults = 0
    /// Entries that failed their checksum (or a shared tier's seal); each was removed or
    /// ignored and treated as a miss.
    public var corruptEntries = 0
    /// Purges carried out, asked of this pipeline or heard from another node.
    public var purges = 0
    /// Variants served again without being made again, because their original was confirmed
    /// unchanged (a 304, or the same validators).
    public var revalidatedVariants = 0
    /// Disk entries given new freshness in place, their bytes not rewritten.
    public var diskRefreshes = 0
    /// Entries written to disk, and writes that failed (full disk, permissions).
    public var diskWrites = 0
    /// Entries that could not be written to disk.
    public var diskWriteErrors = 0
    /// Distinct pieces of work running or queued now, and the most there ever were.
    public var inFlight = 0
    /// The most distinct pieces of work in flight at once.
    public var inFlightPeak = 0
    /// Results whose source's longest side is more than 4 times the output's: a smaller
    /// source would have done.
    public var oversizedSources = 0
    /// Plugins' process-wide counters (`ProcessCounters`) when the stats were taken, by name.
    public var processCounters: [String: Int] = [:]

    /// No figures yet.
    public init() {}

    /// The counters, by the snake_case name `--stats` prints and swift-metrics exports
    /// (as `pipelinehost_<name>_total`).
    public static var counters: [(name: String, field: WritableKeyPath<PipelineStats, Int>)] {
        [
            ("requests", \.requests), ("succeeded", \.succeeded), ("failed", \.failed), ("cancelled", \.cancelled),
            ("coalesced", \.coalesced), ("fetches", \.fetches), ("fetches_succeeded", \.fetchesSucceeded),
            ("bytes_fetched", \.bytesFetched), ("decodes", \.decodes),
            ("memory_lookups", \.memoryLookups), ("memory_hits", \.memoryHits),
            ("disk_lookups", \.diskLookups), ("disk_hits", \.diskHits), ("revalidated", \.revalidated),
            ("stale_served", \.staleServed), ("stale_results", \.staleResults), ("corrupt_entries", \.corruptEntries),
            ("disk_writes", \.diskWrites), ("disk_write_errors", \.diskWriteErrors),
            ("oversized_sources", \.oversizedSources),
            ("revalidated_variants", \.revalidatedVariants), ("disk_refreshes", \.diskRefreshes),
            ("purges", \.purges),
        ]
    }

    /// Decode time per image opened, in milliseconds.
    public var averageDecodeMilliseconds: Double {
        decodes == 0 ? 0 : decodeTime.milliseconds / Double(decodes)
    }

    /// Bytes per transfer that returned bytes: the average source size.
    public var averageSourceBytes: Double {
        fetchesSucceeded == 0 ? 0 : Double(bytesFetched) / Double(fetchesSucceeded)
    }

    /// Hits per lookup, 0 when there were none.
    public var memoryHitRate: Double { memoryLookups == 0 ? 0 : Double(memoryHits) / Double(memoryLookups) }
    /// Disk hits per disk lookup, from 0 to 1.
    public var diskHitRate: Double { diskLookups == 0 ? 0 : Double(diskHits) / Double(diskLookups) }

    /// The figures as (snake_case name, number) pairs, in a stable order: the `--stats` JSON.
    public var fields: [(name: String, value: Double)] {
        Self.counters.map { ($0.name, Double(self[keyPath: $0.field])) } + [
            ("decode_ms_avg", Self.rounded(averageDecodeMilliseconds, places: 2)),
            ("source_bytes_avg", averageSourceBytes.rounded()),
            ("memory_hit_rate", Self.rounded(memoryHitRate, places: 3)),
            ("disk_hit_rate", Self.rounded(diskHitRate, places: 3)),
            ("in_flight", Double(inFlight)), ("in_flight_peak", Double(inFlightPeak)),
        ] + processCounters.sorted { $0.key < $1.key }.map { ($0.key, Double($0.value)) }
    }

    private static func rounded(_ value: Double, places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}

extension Duration {
    /// The duration in (fractional) milliseconds.
    public var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    /// The duration in (fractional) seconds: what a flag or a setting in seconds shows.
    public var seconds: Double { milliseconds / 1000 }

    /// Whole milliseconds, rounded down: what a timeout in milliseconds (Redis' PX, hiredis') takes.
    public var wholeMilliseconds: Int {
        Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000)
    }
}
