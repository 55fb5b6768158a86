/// The memory tier: a `MemoryCache` behind a lock, so a hit is a dictionary lookup and a relink
/// on whichever thread asks, and the pipeline answers it without starting any work.
final class MemoryTier: CacheTier {
    let name = "memory"
    private let cache: Locked<MemoryCache<StageKey>>

    init(limits: MemoryCache<StageKey>.Limits) {
        cache = Locked(MemoryCache(limits: limits, keyCost: \.byteCount))
    }

    func keeps(_ point: CachePoint) -> Bool { point.memory }

    /// The entry, fresh or not, at once; marks it most recently used.
    func entry(for key: StageKey) -> CacheEntry? {
        cache.withLock { $0.entry(for: key) }
    }

    func read(_ key: StageKey, at point: CachePoint) async -> CacheRead {
        entry(for: key).map(CacheRead.hit) ?? .miss
    }

    /// Drops the purged sources' entries; returns how many.
    func purge(_ purge: SourcePurge) -> Int {
        cache.withLock { $0.removeAll(where: purge.matches) }
    }

    func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        cache.withLock { $0.insert(entry, for: key) }
    }
}
