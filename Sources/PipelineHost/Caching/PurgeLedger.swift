/// What the cache knows of purges: when each source was last purged (as a count of purges), and
/// which sources are being purged now.
///
/// Order of a purge: `begin` (record it, and mark it under way), drain every tier (writes
/// committed before it land), delete from each tier, `end`. Meanwhile:
/// - a request notes `now` when it looks in the cache, and its writes are dropped if its
///   source's purge is newer: work begun before a purge never stores what it made after it;
/// - a lookup of a source under purge reads no tier and copies nothing between tiers, so an
///   entry a later step of the purge is about to delete is never served or copied back.
final class PurgeLedger: Sendable {
    /// The process's ledger, which every pipeline's cache consults: a pipeline a reload
    /// replaced, still finishing its requests, drops their writes too.
    static let process = PurgeLedger()

    private struct State {
        var count: UInt64 = 0
        var last: [String: UInt64] = [:]
        /// Digests of sources under purge, with how many purges of each are under way.
        var active: [String: Int] = [:]
    }

    private let state = Locked(State())

    /// The count of purges so far.
    var now: UInt64 { state.withLock { $0.count } }

    /// Records a purge of `purge`'s sources and marks them under way.
    func begin(_ purge: SourcePurge) {
        state.withLock { state in
            state.count += 1
            for digest in Self.digests(purge) {
                state.last[digest] = state.count
                state.active[digest, default: 0] += 1
            }
        }
    }

    /// The purge's deletes are done.
    func end(_ purge: SourcePurge) {
        state.withLock { state in
            for digest in Self.digests(purge) {
                let left = (state.active[digest] ?? 1) - 1
                state.active[digest] = left > 0 ? left : nil
            }
        }
    }

    /// Whether `source` (a source key) was purged after `epoch`.
    func purged(_ source: String, since epoch: UInt64) -> Bool {
        state.withLock { state in
            guard !state.last.isEmpty, let last = state.last[SourcePurge.digest(source)] else { return false }
            return last > epoch
        }
    }

    /// Whether a purge of `source` (a source key) is under way.
    func isPurging(_ source: String) -> Bool {
        state.withLock { state in
            !state.active.isEmpty && state.active[SourcePurge.digest(source)] != nil
        }
    }

    private static func digests(_ purge: SourcePurge) -> Set<String> {
        purge.digests.union(purge.keys.map(SourcePurge.digest))
    }
}
