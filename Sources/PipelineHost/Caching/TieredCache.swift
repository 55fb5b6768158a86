import Logging
import Tracing

/// A pipeline's cache tiers and what they mean for a request: the order they are asked in
/// (memory, disk, then `CacheSettings.additionalTiers`), when a stored entry answers, what a
/// stale original is revalidated with, what a 304 or a failure makes of it, and what is stored
/// once a request succeeds. The tiers themselves only read and store.
final class TieredCache: Sendable {
    let mode: CacheSettings.Mode
    let memory: MemoryTier
    let disk: DiskTier
    /// Every tier after memory, in lookup order.
    private let lower: [any CacheTier]
    private let counters: PipelineCounters
    private let blocking: BlockingExecutor
    private let logger: Logger
    private let clock = ContinuousClock()
    /// The time of day every freshness decision is made at.
    let wall: WallClock
    /// When each source was last purged: writes of work begun before are dropped. One for the
    /// process, so a pipeline that a reload replaced, still finishing its requests, drops them too.
    let purges = PurgeLedger.process

    init(settings: CacheSettings, blocking: BlockingExecutor, counters: PipelineCounters, logger: Logger) {
        mode = settings.mode
        wall = settings.clock
        memory = MemoryTier(limits: settings.memory)
        disk = DiskTier(
            writer: DiskWriter(limit: settings.diskLimit, blocking: blocking, counters: counters, logger: logger),
            blocking: blocking)
        lower = [disk] + settings.additionalTiers
        self.blocking = blocking
        self.counters = counters
        self.logger = logger
    }

    /// A fresh memory entry for `key`, answered at once with no work and no task. Offline, a
    /// stale one does too, flagged.
    func memoryHit(_ key: StageKey, at point: CachePoint) -> StepValue? {
        guard point.memory, mode != .refresh else { return nil }
        let started = clock.now
        counters.add(\.memoryLookups)
        let span = PipelineTracing.start(SpanNames.cache(memory.name))
        guard let entry = memory.entry(for: key) else {
            Self.end(span, tier: memory.name, "miss")
            return nil
        }
        let fresh = entry.isFresh(at: wall.now)
        Self.end(span, tier: memory.name, fresh ? "hit" : "stale")
        guard fresh || mode == .offline else { return nil }
        counters.add(\.memoryHits)
        var value = StepValue(stored: entry, lookup: clock.now - started, stale: !fresh)
        value.memoryHit = true
        return value
    }

    /// What a lookup behind a cache point found.
    enum Lookup {
        /// A stored entry answers; the work behind the point does not run.
        case hit(StepValue)
        /// The work must run: conditionally, with `validators`, when a stale original has them.
        case miss(Miss)
    }

    /// A miss, and what it leaves for `settle`.
    struct Miss {
        /// The newest stored entry, stale: the last good image.
        let last: CacheEntry?
        /// For a conditional fetch of a stale original.
        let validators: Validators?
        /// A stale variant that records the original it was made from: if that original is
        /// confirmed unchanged, this serves again without being made again.
        let reusable: CacheEntry?
        /// Time the lookup took.
        let lookup: Duration
        /// `purges.now` when the lookup began.
        let epoch: UInt64
    }

    /// The first tier after memory that shares work between processes and keeps `point`.
    func coordinator(for point: CachePoint) -> (any WorkCoordinator)? {
        guard mode == .normal else { return nil }
        return lower.lazy.compactMap { $0 as? any WorkCoordinator }.first { $0.keeps(point) }
    }

    /// Asks the tiers after memory in order. A fresh entry answers and is copied into the tiers
    /// before the one that had it; the newest stale one is kept as the last good image.
    func lookup(_ key: StageKey, at point: CachePoint) async -> Lookup {
        let started = clock.now
        let epoch = purges.now
        // A source under purge: what the tiers hold is about to go, so nothing of it is read.
        if purges.isPurging(key.source) {
            return .miss(Miss(last: nil, validators: nil, reusable: nil, lookup: clock.now - started, epoch: epoch))
        }
        // Memory was looked up when this work started; an expired entry still serves as the
        // last good one.
        var last = point.memory ? memory.entry(for: key) : nil
        for (index, tier) in lower.enumerated() where tier.keeps(point) {
            let isDisk = tier === disk
            if isDisk { counters.add(\.diskLookups) }
            let span = PipelineTracing.start(SpanNames.cache(tier.name))
            let read = await tier.read(key, at: point)
            if let span { Self.end(span, tier: tier.name, read.traced(fresh: { $0.isFresh(at: wall.now) })) }
            switch read {
            case .hit(let entry):
                if entry.isFresh(at: wall.now), mode != .refresh {
                    if isDisk { counters.add(\.diskHits) }
                    // Not when the source was purged while this tier was read.
                    for earlier in [memory] + lower[..<index] where earlier.keeps(point) {
                        if purges.purged(key.source, since: epoch) || purges.isPurging(key.source) { break }
                        earlier.store(entry, for: key, at: point)
                    }
                    var value = StepValue(stored: entry, lookup: clock.now - started, stale: false)
                    value.diskHit = isDisk
                    value.sharedHit = !isDisk
                    value.sharedTier = isDisk ? nil : tier.name
                    return .hit(value)
                }
                if entry.storedAt > last?.storedAt ?? -.infinity { last = entry }
            case .corrupt:
                counters.add(\.corruptEntries)
            case .miss:
                break
            }
        }
        if mode == .offline, let last {
            counters.add(\.staleServed)
            return .hit(StepValue(stored: last, lookup: clock.now - started, stale: true))
        }
        let validators = point.layer == .original ? last?.image.cacheHints?.validators : nil
        let reusable = point.layer == .variant && mode != .refresh && last?.origin != nil ? last : nil
        return .miss(
            Miss(
                last: last, validators: validators?.isEmpty == false ? validators : nil, reusable: reusable,
                lookup: clock.now - started, epoch: epoch))
    }

    /// Ends a cache span with its tier and what the lookup found.
    private static func end(_ span: (any Span)?, tier: String, _ lookup: String) {
        guard let span else { return }
        span.attributes[SpanNames.cacheTier] = tier
        span.attributes[SpanNames.lookup] = lookup
        span.end()
    }

    /// What the work behind a cache point gave, as the point answers it: a 304 becomes the
    /// stored bytes with the new freshness, a success gets a pending store, and a failure
    /// becomes the last good entry where the profile asks for that.
    func settle(
        _ outcome: StepOutcome, after miss: Miss, key: StageKey, at point: CachePoint,
        step: String, source: String
    ) -> StepOutcome {
        switch outcome {
        case .success(var value):
            value.timings.append(.init(stage: "cache", duration: miss.lookup))
            guard case .encoded(var image) = value.value else { return .success(value) }
            let notModified = image.notModified
            if notModified {
                guard let last = miss.last else {
                    return .failure(
                        PipelineError(.stageFailed, "\(step) answered \"not modified\" but nothing is stored"))
                }
                counters.add(\.revalidated)
                image = Self.refreshed(last.image, with: image.cacheHints)
                value.value = .encoded(image)
            }
            return .success(
                pendingStore(
                    value, image: image, key: key, point: point, freshnessOnly: notModified, epoch: miss.epoch))
        case .failure(let error):
            guard error.kind != .cancelled, point.onError == .stale, let last = miss.last else {
                return .failure(error)
            }
            counters.add(\.staleServed)
            logger.warning(
                "serving the last good image", metadata: ["source": "\(source)", "error": "\(error.reason)"])
            return .success(StepValue(stored: last, lookup: miss.lookup, stale: true))
        }
    }

    /// A stale variant served again: `original` is the value of the original it was made
    /// from, confirmed to be the same version. It gets the original's new freshness (bounded by
    /// its own ttl) and a freshness-only store; nothing is decoded or encoded.
    func reuse(_ variant: CacheEntry, after original: StepValue, key: StageKey, at point: CachePoint, miss: Miss)
        -> StepValue
    {
        counters.add(\.revalidatedVariants)
        var entry = variant
        let now = wall.now
        entry.storedAt = now
        entry.expiresAt = min(now + point.ttl, original.expiresAt ?? .infinity)
        var value = original
        value.value = .encoded(entry.image)
        value.timings.append(.init(stage: "cache", duration: miss.lookup))
        value.expiresAt = entry.expiresAt
        value.memoryHit = false
        value.diskHit = false
        value.sharedHit = false
        if !value.noStore {
            value.pending.append(
                CacheWrite(key: key, point: point, entry: entry, freshnessOnly: true, epoch: miss.epoch))
        }
        return value
    }

    /// Stores what a successful request used, in every tier that keeps it. Each entry is stored
    /// once, however many requests shared it; an entry with only new freshness is refreshed.
    func commit(_ writes: [CacheWrite]) {
        for write in writes where write.claim() {
            // Made from bytes read before a purge of its source: never stored after it.
            if purges.purged(write.key.source, since: write.epoch) { continue }
            for tier in [memory] + lower where tier.keeps(write.point) {
                if write.freshnessOnly {
                    tier.refresh(write.entry, for: write.key, at: write.point)
                } else {
                    tier.store(write.entry, for: write.key, at: write.point)
                }
            }
        }
    }

    /// Waits until every tier has finished the stores started so far.
    func drain() async {
        for tier in [memory] + lower { await tier.drain() }
    }

    /// The first step of a purge: records it, so work begun before it stores nothing and
    /// lookups of the source read no tier until `purge` ends it. The pipeline detaches the
    /// source's work in flight in the same turn, so no request can join work begun before it.
    func record(_ purge: SourcePurge) -> RecordedPurge {
        purges.begin(purge)
        return RecordedPurge(purge: purge)
    }

    /// Drops a recorded purge's sources from every tier: empties memory of them at once
    /// (nothing stores them there again), waits for the stores already started, then deletes
    /// from each of `directories` and from every tier after disk. With `announce`, once all of
    /// that is done, the shared tier tells the other nodes, which then find nothing of the
    /// source left anywhere but their own copies.
    func purge(_ recorded: RecordedPurge, directories: Set<String>, announce: Bool) async -> PurgeReport {
        let purge = recorded.purge
        defer { purges.end(purge) }
        var report = PurgeReport()
        report.removed["memory"] = memory.purge(purge)
        await drain()
        var onDisk = 0
        for directory in directories.sorted() {
            let cache = DiskCache(directory: directory)
            onDisk += await blocking.run { cache.purge(purge) }
        }
        report.removed["disk"] = onDisk
        for case let tier as any PurgeableTier in lower {
            do {
                report.removed[tier.name, default: 0] += try await tier.purge(purge)
            } catch {
                report.failures.append("\(tier.name): \(error.reason)")
            }
        }
        for case let tier as any PurgeableTier in lower where announce {
            do {
                try await tier.announce(purge)
            } catch {
                report.failures.append("\(tier.name): announcing the purge: \(error.reason)")
            }
        }
        counters.add(\.purges)
        return report
    }

    /// A purge `record` began, for `purge` to carry out.
    struct RecordedPurge {
        let purge: SourcePurge
    }

    /// The tiers that hear other nodes' purges, and so need a handler.
    var purgeAnnouncers: [any PurgeableTier] { lower.compactMap { $0 as? any PurgeableTier } }

    /// `value` with a pending store of its bytes, unless the origin forbade storing. A variant
    /// records the version of the original it was made from.
    private func pendingStore(
        _ value: StepValue, image: EncodedImage, key: StageKey, point: CachePoint,
        freshnessOnly: Bool, epoch: UInt64
    ) -> StepValue {
        var value = value
        let now = wall.now
        let lifetime = point.layer == .original ? image.cacheHints?.maxAge ?? point.ttl : point.ttl
        let expiresAt = min(now + lifetime, value.expiresAt ?? .infinity)
        value.expiresAt = expiresAt
        guard !value.noStore else { return value }
        var kept = image
        kept.notModified = false
        let origin = point.layer == .variant ? value.originVersion : nil
        value.pending.append(
            CacheWrite(
                key: key, point: point,
                entry: CacheEntry(image: kept, storedAt: now, expiresAt: expiresAt, origin: origin),
                freshnessOnly: freshnessOnly, epoch: epoch))
        return value
    }

    /// The stored image, with what a 304 said about it (new freshness, maybe new validators).
    private static func refreshed(_ image: EncodedImage, with hints: CacheHints?) -> EncodedImage {
        var image = image
        guard let hints else { return image }
        var merged = hints
        if merged.validators.isEmpty { merged.validators = image.cacheHints?.validators ?? Validators() }
        image.cacheHints = merged
        return image
    }
}
