/// Disk cache I/O, off the actor. Writes to one directory run one after another, each first
/// making room under the size limit, so the limit holds while a batch runs, not only at exit.
extension Pipeline {
    func readDisk(_ directory: String, key: StageKey) async -> DiskCache.ReadResult {
        // An entry on its way to disk is as good as there: no second download meanwhile.
        if let entry = writingToDisk[DiskKey(directory: directory, key: key)] { return .hit(entry) }
        let cache = DiskCache(directory: directory), name = key.description
        return await blocking.run { cache.read(key: name) }
    }

    func writeDisk(_ directory: String, key: StageKey, entry: CacheEntry, layer: CacheLayer) {
        let previous = diskWrites[directory]
        let pending = DiskKey(directory: directory, key: key)
        writingToDisk[pending] = entry
        let cache = DiskCache(directory: directory), name = key.description
        let limit = configuration.cache.diskLimit, blocking = blocking
        // The task runs on this actor (it inherits the isolation); only the I/O leaves it.
        diskWrites[directory] = Task {
            await previous?.value
            let usage = diskUsage[directory]
            let result: Result<Int, any Error>
            do {
                result = .success(try await blocking.run { try cache.store(entry, key: name, layer: layer, usage: usage, limit: limit) })
            } catch {
                result = .failure(error)
            }
            writingToDisk[pending] = nil
            diskWriteFinished(directory, result: result)
        }
    }

    private func diskWriteFinished(_ directory: String, result: Result<Int, any Error>) {
        switch result {
        case .success(let usage):
            diskUsage[directory] = usage
            counters.add(\.diskWrites)
        case .failure(let error):
            // A full disk or a read-only directory costs the cache, never the request.
            diskUsage[directory] = nil
            counters.add(\.diskWriteErrors)
            logger.warning("cache: cannot store an entry", metadata: ["directory": "\(directory)", "error": "\(error)"])
        }
    }

    /// Waits until every disk write started so far has finished. The CLI calls it before it
    /// exits, so the next run finds what this one stored.
    public func flushCache() async {
        while let (directory, task) = diskWrites.first {
            await task.value
            if diskWrites[directory] == task { diskWrites[directory] = nil }
        }
    }
}

/// An entry's place: its directory and key.
struct DiskKey: Hashable {
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
