/// When each source was last purged, as a count of purges, so work that began before a purge of
/// its source never stores what it made: a request notes `now` when it looks in the cache, and
/// its writes are dropped if the source's purge is newer.
///
/// Order of a purge: record it here first, then drain every tier (writes committed before it
/// land), then delete. A write committed after the record is checked against it and dropped;
/// one committed before has landed by the time the deletes run.
final class PurgeLedger: Sendable {
    /// The process's ledger, which every pipeline's cache consults.
    static let process = PurgeLedger()

    private let state = Locked<(count: UInt64, last: [String: UInt64])>((0, [:]))

    /// The count of purges so far.
    var now: UInt64 { state.withLock { $0.count } }

    /// Records a purge of `purge`'s sources.
    func record(_ purge: SourcePurge) {
        state.withLock { state in
            state.count += 1
            for digest in purge.digests { state.last[digest] = state.count }
            for key in purge.keys { state.last[SourcePurge.digest(key)] = state.count }
        }
    }

    /// Whether `source` (a source key) was purged after `epoch`.
    func purged(_ source: String, since epoch: UInt64) -> Bool {
        state.withLock { state in
            guard !state.last.isEmpty, let last = state.last[SourcePurge.digest(source)] else { return false }
            return last > epoch
        }
    }
}
