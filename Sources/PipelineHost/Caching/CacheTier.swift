/// One place where cache entries live: memory, a disk directory, or a store shared between
/// machines. A pipeline looks in its tiers in order (memory, disk, then
/// `CacheSettings.additionalTiers`), and `TieredCache` decides what a found entry means; a tier
/// only reads and stores.
///
/// Tiers are shared with pool threads: keep state behind a lock (`Locked`), and never block the
/// caller of `store` or of a synchronous method.
public protocol CacheTier: AnyObject, Sendable {
    /// A short name for logs: "memory", "disk".
    var name: String { get }

    /// Whether this tier keeps the entries of a cache point (a profile's `cache` stage).
    func keeps(_ point: CachePoint) -> Bool

    /// The entry stored for `key`, fresh or not.
    func read(_ key: StageKey, at point: CachePoint) async -> CacheRead

    /// Stores `entry` for `key`. Returns at once: a tier that writes slowly queues the write,
    /// and a later `read` already finds the entry.
    func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint)

    /// `entry` is what the tier holds for `key` with new freshness (its original was confirmed
    /// unchanged). A tier that can update freshness without rewriting the bytes does so. Returns
    /// at once, as `store` does.
    func refresh(_ entry: CacheEntry, for key: StageKey, at point: CachePoint)

    /// Waits until every store started so far has finished.
    func drain() async
}

extension CacheTier {
    /// Stores the entry again, bytes and all.
    public func refresh(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        store(entry, for: key, at: point)
    }

    /// Nothing to wait for: the tier stores as it is asked to.
    public func drain() async {}
}

/// What a tier found for a key.
public enum CacheRead: Sendable {
    /// An entry, fresh or not.
    case hit(CacheEntry)
    /// Nothing stored.
    case miss
    /// Something was stored but unsound (a failed checksum); the tier has removed it.
    case corrupt
}

extension CacheRead {
    /// The lookup's outcome as a cache span names it: hit, stale, miss or corrupt.
    func traced(fresh: (CacheEntry) -> Bool) -> String {
        switch self {
        case .hit(let entry): fresh(entry) ? "hit" : "stale"
        case .miss: "miss"
        case .corrupt: "corrupt"
        }
    }
}
