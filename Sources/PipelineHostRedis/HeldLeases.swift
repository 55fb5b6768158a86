import PipelineHost

/// The leases this node holds, by token: while their work runs, and after it succeeded until
/// its entry is stored (or a grace ends). A purge of a source revokes its leases here, so the
/// next request for the source, on this node or another, leads anew rather than wait for work
/// begun before the purge, whose result is stored nowhere.
final class HeldLeases: Sendable {
    private struct Lease {
        let keys: LeaseKeys
        /// `SourcePurge.digest` of the entry's source key.
        let source: String
        var awaitingStore = false
    }

    private let leases = Locked<[String: Lease]>([:])

    /// Leases held now.
    var count: Int { leases.withLock { $0.count } }

    /// This node won the lease `token` for an entry of `source` (a source key).
    func add(_ token: String, keys: LeaseKeys, source: String) {
        let digest = SourcePurge.digest(source)
        leases.withLock { $0[token] = Lease(keys: keys, source: digest) }
    }

    /// The lease's work succeeded: it waits for its entry's store. False when a purge revoked it.
    func awaitStore(_ token: String) -> Bool {
        leases.withLock { leases in
            guard leases[token] != nil else { return false }
            leases[token]!.awaitingStore = true
            return true
        }
    }

    /// The entry under `valueKey` was stored, or will not be: the lease that waited for it,
    /// taken out, to be released.
    func stored(_ valueKey: String) -> String? {
        leases.withLock { leases in
            guard let token = leases.first(where: { $0.value.awaitingStore && $0.value.keys.value == valueKey })?.key
            else { return nil }
            leases[token] = nil
            return token
        }
    }

    /// Takes the lease out, to be released; nil when it is not held (a purge revoked it, or it
    /// was released already).
    func take(_ token: String) -> LeaseKeys? {
        leases.withLock { $0.removeValue(forKey: token)?.keys }
    }

    /// Takes out every lease of the purged sources, to be released.
    func revoke(_ purge: SourcePurge) -> [(token: String, keys: LeaseKeys)] {
        leases.withLock { leases in
            let doomed = leases.filter { purge.digests.contains($0.value.source) }
            for token in doomed.keys { leases[token] = nil }
            return doomed.map { ($0.key, $0.value.keys) }
        }
    }
}
