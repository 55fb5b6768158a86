/// The disk tier: entries in the cache directory of each cache point, read off the cooperative
/// pool and written by the pipeline's one `DiskWriter`.
final class DiskTier: CacheTier {
    let name = "disk"
    let writer: DiskWriter
    private let blocking: BlockingExecutor

    init(writer: DiskWriter, blocking: BlockingExecutor) {
        self.writer = writer
        self.blocking = blocking
    }

    func keeps(_ point: CachePoint) -> Bool { point.disk && point.directory != nil }

    func read(_ key: StageKey, at point: CachePoint) async -> CacheRead {
        guard let directory = point.directory else { return .miss }
        // An entry on its way to disk is as good as there: no second download meanwhile.
        if let entry = writer.queued(DiskKey(directory: directory, key: key)) { return .hit(entry) }
        let cache = DiskCache(directory: directory), name = key.description
        return await blocking.run { cache.read(key: name) }
    }

    func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        guard let directory = point.directory else { return }
        writer.enqueue(.init(place: DiskKey(directory: directory, key: key), entry: entry, layer: point.layer))
    }

    func refresh(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        guard let directory = point.directory else { return }
        writer.enqueue(
            .init(place: DiskKey(directory: directory, key: key), entry: entry, layer: point.layer, freshnessOnly: true)
        )
    }

    func drain() async { await writer.drain() }
}
