/// Where a chain meets its cache points. `TieredCache` decides what a lookup means; this file
/// runs the work behind a point when it must.
extension Pipeline {
    /// Step `step` behind its cache point: a stored entry if one answers, else the work (a
    /// conditional fetch when a stale original has validators), settled by the cache. A stale
    /// variant whose original turns out unchanged serves again without decoding anything.
    func throughCache(_ chain: Chain, step: Int, work: WorkRef, point: CachePoint) async -> StepOutcome {
        let key = chain.keys[step]
        let miss: TieredCache.Miss
        switch await cache.lookup(key, at: point) {
        case .hit(let value): return .success(value)
        case .miss(let found): miss = found
        }
        let settle = { [cache] (outcome: StepOutcome) in
            cache.settle(
                outcome, after: miss, key: key, at: point, step: chain.steps[step].name, source: chain.source.redacted)
        }
        if let variant = miss.reusable, let originalStep = chain.originalStep(before: step) {
            // The original first (revalidated through its own cache point). Its value stays
            // held for this request, so the full work below does not fetch it again.
            switch await joinAsInput(chain, step: originalStep, for: work) {
            case .failure(let error):
                return settle(.failure(error))
            case .success(let original) where original.originVersion == variant.origin:
                return .success(cache.reuse(variant, after: original, key: key, at: point, miss: miss))
            case .success:
                break
            }
        }
        // Another process may be making the same entry: lead it, wait for it, or fail as it did.
        if let coordinator = cache.coordinator(for: point) {
            switch await coordinator.coordinate(key, at: point) {
            case .lead(let lease):
                // A variant others wait for outlives this process's requests (see `leave`). An
                // original does not: it is stored only once a request has decoded it.
                if point.layer == .variant { inFlight.lead(work.key, work: work.id, lease: lease) }
                let outcome = settle(await compute(chain, step: step, work: work, validators: miss.validators))
                if inFlight.isOrphaned(work.key, work: work.id), case .success(let value) = outcome {
                    // Nobody here waits any more; it went on for waiters elsewhere: store it.
                    cache.commit(value.pending)
                }
                // A failure is told to other processes only when it cannot depend on parts of
                // the source the key leaves out (credentials, dropped parameters, signers).
                lease.finished(outcome.map { _ in () }, shareable: !chain.source.keyHidesParts)
                return outcome
            case .lookAgain:
                if case .hit(let value) = await cache.lookup(key, at: point) { return .success(value) }
            case .failed(let error) where !chain.source.keyHidesParts:
                return settle(.failure(error))
            case .failed:
                // Another process failed on a source with this key, but this one carries parts
                // the key leaves out (credentials, say) that may well succeed: run it here.
                break
            case .alone:
                break
            }
        }
        return settle(await compute(chain, step: step, work: work, validators: miss.validators))
    }

    /// Waits until every cache store started so far has finished. The CLI calls it before it
    /// exits, so the next run finds what this one stored.
    public func flushCache() async {
        await cache.drain()
    }
}
