/// One entry to store once a request that used it has succeeded, so an original that turns out
/// not to decode is never kept. Every request that shared the step carries the same write; the
/// first of them to succeed stores it, and `claim()` keeps the others from storing it again.
final class CacheWrite: Sendable {
    let key: StageKey
    let point: CachePoint
    let entry: CacheEntry
    /// The tiers hold these bytes already; only their freshness is new (after a 304).
    let freshnessOnly: Bool
    /// `PurgeLedger.now` when the work that made the entry looked in the cache: a purge of its
    /// source after that drops the write, so bytes fetched before a purge are never stored after it.
    let epoch: UInt64
    private let claimed = Locked(false)

    init(key: StageKey, point: CachePoint, entry: CacheEntry, freshnessOnly: Bool = false, epoch: UInt64) {
        self.key = key
        self.point = point
        self.entry = entry
        self.freshnessOnly = freshnessOnly
        self.epoch = epoch
    }

    /// Whether a request has stored it already.
    var isCommitted: Bool { claimed.withLock { $0 } }

    /// True for the first caller only: that one stores the entry.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
