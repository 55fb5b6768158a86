import Logging

/// Every disk-cache write of one pipeline, one at a time and in order, off the cooperative pool.
/// Each write first makes room under the size limit (shared with other processes through the
/// directory's usage file), so the limit holds while a batch runs, not only at exit. An entry is readable from the moment it is queued, so nobody downloads it again
/// meanwhile. `drain()` waits for what was queued: the CLI awaits it before it exits.
final class DiskWriter: Sendable {
    /// One entry to write.
    struct Job: Sendable {
        let place: DiskKey
        let entry: CacheEntry
        let layer: CacheLayer
        /// Only the freshness changed: update it in place, and write the whole entry only when
        /// the file cannot take that.
        var freshnessOnly = false
        /// Its place in the queue, so a write ends only its own entry's wait.
        var number = 0
    }

    private struct State {
        var queue: [Job] = []
        var next = 0
        var writing = false
        /// Entries queued and not yet written, by place: the newest job for each.
        var queued: [DiskKey: Job] = [:]
        var jobsQueued = 0
        var drainers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())
    private let limit: Int
    private let blocking: BlockingExecutor
    private let counters: PipelineCounters
    private let logger: Logger

    init(limit: Int, blocking: BlockingExecutor, counters: PipelineCounters, logger: Logger) {
        self.limit = limit
        self.blocking = blocking
        self.counters = counters
        self.logger = logger
    }

    /// Queues a write, and starts the writer if it is idle.
    func enqueue(_ job: Job) {
        let start = state.withLock { state in
            var job = job
            state.jobsQueued += 1
            job.number = state.jobsQueued
            state.queued[job.place] = job
            state.queue.append(job)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if start { Task { await self.writeQueued() } }
    }

    /// The entry queued for `place` and not written yet.
    func queued(_ place: DiskKey) -> CacheEntry? {
        state.withLock { $0.queued[place]?.entry }
    }

    /// Waits until every write queued so far has finished.
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if !state.writing { return true }
                state.drainers.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func writeQueued() async {
        while let next = take() {
            let cache = DiskCache(directory: next.place.directory), name = next.place.key.description, limit = limit
            let (refreshed, result) = await blocking.run { () -> (Bool, Result<Int, DiskCache.WriteError>) in
                if next.freshnessOnly,
                    cache.refresh(key: name, storedAt: next.entry.storedAt, expiresAt: next.entry.expiresAt)
                {
                    return (true, .success(0))
                }
                return (
                    false,
                    Result { () throws(DiskCache.WriteError) in
                        try cache.store(
                            next.entry, key: name, layer: next.layer, limit: limit, source: next.place.key.source)
                    }
                )
            }
            finished(next, result: result, refreshed: refreshed)
        }
    }

    /// The next job; nil, with the writer marked idle and the drainers answered, when the queue
    /// is empty.
    private func take() -> Job? {
        let (job, drainers): (Job?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            guard state.next < state.queue.count else {
                state.queue = []
                state.next = 0
                state.writing = false
                defer { state.drainers = [] }
                return (nil, state.drainers)
            }
            let job = state.queue[state.next]
            state.next += 1
            return (job, [])
        }
        for drainer in drainers { drainer.resume() }
        return job
    }

    private func finished(_ job: Job, result: Result<Int, DiskCache.WriteError>, refreshed: Bool) {
        state.withLock { state in
            if state.queued[job.place]?.number == job.number {
                state.queued[job.place] = nil
            }
        }
        switch result {
        case .success where refreshed:
            counters.add(\.diskRefreshes)
        case .success:
            counters.add(\.diskWrites)
        case .failure(let error):
            // A full disk or a read-only directory costs the cache, never the request.
            counters.add(\.diskWriteErrors)
            logger.warning(
                "cache: cannot store an entry", metadata: ["directory": "\(job.place.directory)", "error": "\(error)"])
        }
    }
}

/// An entry's place on disk: its directory and key.
struct DiskKey: Hashable, Sendable {
    let directory: String
    let key: StageKey
}
