/// The cache points of a chain: lookups in memory, then on disk, then the work itself;
/// revalidation of stale originals; the last good entry on failure; and stores that wait for
/// a request to succeed.
extension Pipeline {
    /// A fresh memory entry for step `step`, if a cache point there keeps one. Offline, a stale
    /// one does too, flagged.
    func memoryHit(_ chain: Chain, step: Int) -> StepValue? {
        guard let point = chain.caches[step], point.memory, configuration.cache.mode != .refresh else { return nil }
        let started = clock.now
        counters.add(\.memoryLookups)
        guard let entry = memory.entry(for: chain.keys[step]) else { return nil }
        let fresh = entry.isFresh(at: wallClock())
        guard fresh || configuration.cache.mode == .offline else { return nil }
        counters.add(\.memoryHits)
        var value = storedValue(entry, timing: clock.now - started, stale: !fresh)
        value.memoryHit = true
        return value
    }

    /// Step `step` behind its cache point: a stored entry if one is fresh, else the work (a
    /// conditional fetch when a stale original has validators), else, if the work fails and
    /// the profile says so, the stale entry.
    func throughCache(_ chain: Chain, step: Int, work: WorkRef, point: CachePoint) async -> StepOutcome {
        let key = chain.keys[step]
        let mode = configuration.cache.mode
        let started = clock.now
        // Memory was looked up when this work started; an expired entry still serves as the
        // last good one.
        var stored = point.memory ? memory.entry(for: key) : nil
        if point.disk, let directory = point.directory {
            counters.add(\.diskLookups)
            switch await readDisk(directory, key: key) {
            case .hit(let entry):
                if entry.isFresh(at: wallClock()), mode != .refresh {
                    counters.add(\.diskHits)
                    if point.memory { memory.insert(entry, for: key) }
                    var value = storedValue(entry, timing: clock.now - started, stale: false)
                    value.diskHit = true
                    return .success(value)
                }
                if entry.storedAt > stored?.storedAt ?? -.infinity { stored = entry }
            case .corrupt:
                counters.add(\.corruptEntries)
            case .miss:
                break
            }
        }
        let lookup = PipelineResult.StageTiming(stage: "cache", duration: clock.now - started)
        if mode == .offline, let stored {
            counters.add(\.staleServed)
            return .success(storedValue(stored, timing: lookup.duration, stale: true))
        }
        let validators = point.layer == .original ? stored?.image.cacheHints?.validators : nil
        let outcome = await compute(chain, step: step, work: work, validators: validators?.isEmpty == false ? validators : nil)
        switch outcome {
        case .success(var value):
            value.timings.append(lookup)
            guard case .encoded(var image) = value.value else { return .success(value) }
            if image.notModified {
                guard let stored else {
                    return .failure(PipelineError(.stageFailed, "\(chain.steps[step].name) answered \"not modified\" but nothing is stored"))
                }
                counters.add(\.revalidated)
                image = Self.refreshed(stored.image, with: image.cacheHints)
                value.value = .encoded(image)
            }
            return .success(store(value, image: image, key: key, point: point))
        case .failure(let error):
            guard error.kind != .cancelled, point.onError == .stale, let stored else { return .failure(error) }
            counters.add(\.staleServed)
            logger.warning("serving the last good image", metadata: ["source": "\(chain.source.redacted)", "error": "\(error.reason)"])
            return .success(storedValue(stored, timing: lookup.duration, stale: true))
        }
    }

    /// `value` with a pending store of its bytes, unless the origin forbade storing.
    private func store(_ value: StepValue, image: EncodedImage, key: StageKey, point: CachePoint) -> StepValue {
        var value = value
        let now = wallClock()
        let lifetime = point.layer == .original ? image.cacheHints?.maxAge ?? point.ttl : point.ttl
        let expiresAt = min(now + lifetime, value.expiresAt ?? .infinity)
        value.expiresAt = expiresAt
        guard !value.noStore else { return value }
        var kept = image
        kept.notModified = false
        value.pending.append(CacheWrite(key: key, point: point, entry: CacheEntry(image: kept, storedAt: now, expiresAt: expiresAt)))
        return value
    }

    /// Stores what a successful request used. Each entry is stored once, however many requests
    /// shared it.
    func commit(_ writes: [CacheWrite]) {
        for write in writes where !write.committed {
            write.committed = true
            if write.point.memory { memory.insert(write.entry, for: write.key) }
            if write.point.disk, let directory = write.point.directory {
                writeDisk(directory, key: write.key, entry: write.entry, layer: write.point.layer)
            }
        }
    }

    private func storedValue(_ entry: CacheEntry, timing: Duration, stale: Bool) -> StepValue {
        var value = StepValue(value: .encoded(entry.image), timings: [.init(stage: "cache", duration: timing)], shared: false)
        value.stale = stale
        value.expiresAt = entry.expiresAt
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
