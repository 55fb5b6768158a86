import Logging

/// Every disk-cache write of one pipeline, one at a time and in order, off the cooperative pool.
/// Each write first makes room under the size limit, so the limit holds while a batch runs, not
/// only at exit. An entry is readable from the moment it is queued, so nobody downloads it again
/// meanwhile. `drain()` waits for what was queued: the CLI awaits it before it exits.
final class DiskWriter: Sendable {
    /// One entry to write.
    struct Job: Sendable {
        let place: DiskKey
        let entry: CacheEntry
        let layer: CacheLayer
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
        /// Bytes each directory takes, as far as this process knows; absent until measured.
        var usage: [String: Int] = [:]
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
        while let (next, usage) = take() {
            let cache = DiskCache(directory: next.place.directory), name = next.place.key.description, limit = limit
            let result = await blocking.run { () -> Result<Int, DiskCache.WriteError> in
                Result { () throws(DiskCache.WriteError) in
                    try cache.store(next.entry, key: name, layer: next.layer, usage: usage, limit: limit)
                }
            }
            finished(next, result: result)
        }
    }

    /// The next job and its directory's known usage; nil, with the writer marked idle and the
    /// drainers answered, when the queue is empty.
    private func take() -> (Job, Int?)? {
        let (job, drainers): ((Job, Int?)?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            guard state.next < state.queue.count else {
                state.queue = []
                state.next = 0
                state.writing = false
                defer { state.drainers = [] }
                return (nil, state.drainers)
            }
            let job = state.queue[state.next]
            state.next += 1
            return ((job, state.usage[job.place.directory]), [])
        }
        for drainer in drainers { drainer.resume() }
        return job
    }

    private func finished(_ job: Job, result: Result<Int, DiskCache.WriteError>) {
        state.withLock { state in
            switch result {
            case .success(let usage): state.usage[job.place.directory] = usage
            // Measured afresh next time: the failed write may have left the size unknown.
            case .failure: state.usage[job.place.directory] = nil
            }
            if state.queued[job.place]?.number == job.number {
                state.queued[job.place] = nil
            }
        }
        switch result {
        case .success:
            counters.add(\.diskWrites)
        case .failure(let error):
            // A full disk or a read-only directory costs the cache, never the request.
            counters.add(\.diskWriteErrors)
            logger.warning("cache: cannot store an entry", metadata: ["directory": "\(job.place.directory)", "error": "\(error)"])
        }
    }
}

/// An entry's place on disk: its directory and key.
struct DiskKey: Hashable, Sendable {
    let directory: String
    let key: StageKey
}

extension DiskCache {
    /// Writes `entry` after evicting least recently used entries as needed so that the
    /// directory stays within `limit`. `usage` is the directory's size if known (else it is
    /// measured). Returns the size afterwards. An entry larger than the limit is not stored.
    func store(_ entry: CacheEntry, key: String, layer: CacheLayer, usage: Int?, limit: Int) throws(WriteError) -> Int {
        var usage = usage ?? entryFiles().reduce(0) { $0 + $1.bytes }
        let estimate = entry.image.bytes.count + 1024
        guard estimate <= limit else { return usage }
        if usage + estimate > limit {
            // Down to 90%, so a full cache evicts in batches rather than on every write.
            usage = evict(downTo: max(0, limit - limit / 10 - estimate)).bytes
        }
        return usage + (try write(entry, key: key, layer: layer))
    }
}
