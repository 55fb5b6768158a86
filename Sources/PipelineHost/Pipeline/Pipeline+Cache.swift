/// Where a chain meets its cache points. `TieredCache` decides what a lookup means; this file
/// runs the work behind a point when it must.
extension Pipeline {
    /// A fresh memory entry for step `step`, if a cache point there keeps one.
    func memoryHit(_ chain: Chain, step: Int) -> StepValue? {
        guard let point = chain.caches[step] else { return nil }
        return cache.memoryHit(chain.keys[step], at: point)
    }

    /// Step `step` behind its cache point: a stored entry if one answers, else the work (a
    /// conditional fetch when a stale original has validators), settled by the cache.
    func throughCache(_ chain: Chain, step: Int, work: WorkRef, point: CachePoint) async -> StepOutcome {
        let key = chain.keys[step]
        switch await cache.lookup(key, at: point) {
        case .hit(let value):
            return .success(value)
        case .miss(let miss):
            let outcome = await compute(chain, step: step, work: work, validators: miss.validators)
            return cache.settle(outcome, after: miss, key: key, at: point, step: chain.steps[step].name, source: chain.source.redacted)
        }
    }

    /// Waits until every cache store started so far has finished. The CLI calls it before it
    /// exits, so the next run finds what this one stored.
    public func flushCache() async {
        await cache.drain()
    }
}
