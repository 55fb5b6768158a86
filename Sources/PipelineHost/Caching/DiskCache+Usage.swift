import Glibc

/// The bytes a cache directory's entries take, shared by every process that writes to it: a
/// 16-byte "usage" file (the total, and updates since the last rescan), read and updated under
/// flock(2) for a moment before and after each write, never during one. So the size limit holds
/// across processes, not only within one.
///
/// When the file is missing or unreadable, or every 1,024 updates, the total is measured again
/// by listing the entries, so drift (a writer that died between its two updates, entries
/// removed by hand) does not last. `cache verify`, `prune` and `clear` remove the file.
extension DiskCache {
    static let usageFile = "usage"
    static let rescanEvery: Int64 = 1024

    /// Writes `entry`, first making room under `limit` by evicting the least recently used
    /// entries (down to 90%, so a full cache evicts in batches). An entry larger than the limit
    /// is not stored. Returns the directory's total afterwards.
    @discardableResult
    func store(_ entry: CacheEntry, key: String, layer: CacheLayer, limit: Int) throws(WriteError) -> Int {
        let estimate = entry.image.bytes.count + 1024
        guard estimate <= limit else { return 0 }
        try Self.makeDirectory(directory)
        let name = Self.name(for: key)
        let replaced = shard(of: name)?.regularFile(name).map { Int($0.st_size) } ?? 0
        // Reserve room for the entry, so writers in other processes count it meanwhile.
        updateUsage { known in
            var total = known ?? measuredUsage()
            if total + estimate > limit { total = evict(downTo: max(0, limit - limit / 10 - estimate)).bytes }
            return total + estimate
        }
        let written: Int
        do {
            written = try write(entry, key: key, layer: layer)
        } catch {
            updateUsage { known in known.map { max(0, $0 - estimate) } }
            throw error
        }
        return updateUsage { known in known.map { max(0, $0 - estimate + written - replaced) } ?? measuredUsage() } ?? 0
    }

    /// Removes the usage file, so the next writer measures the directory.
    func forgetUsage() {
        _ = CacheDirectory.root(directory)?.removeFile(Self.usageFile)
    }

    /// The entries' bytes, by listing them.
    private func measuredUsage() -> Int { entryFiles().reduce(0) { $0 + $1.bytes } }

    /// Runs `body` with the shared total (nil when it must be measured) under the directory's
    /// lock, and stores what it returns; a nil answer leaves the file for the next rescan.
    @discardableResult
    private func updateUsage(_ body: (Int?) -> Int?) -> Int? {
        guard let root = CacheDirectory.root(directory) else { return body(nil) }
        let fd = root.openFile(Self.usageFile, O_RDWR | O_CREAT, mode: 0o644)
        guard fd >= 0 else { return body(nil) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { return body(nil) }
        }
        defer { flock(fd, LOCK_UN) }
        var words: (Int64, Int64) = (0, 0)
        let read = withUnsafeMutableBytes(of: &words) { pread(fd, $0.baseAddress, 16, 0) }
        let (total, updates) = (Int64(littleEndian: words.0), Int64(littleEndian: words.1))
        let known = read == 16 && total >= 0 && updates >= 0 && updates < Self.rescanEvery ? Int(total) : nil
        guard let answer = body(known) else { return nil }
        words = (Int64(answer).littleEndian, (known == nil ? 0 : updates + 1).littleEndian)
        _ = withUnsafeBytes(of: &words) { pwrite(fd, $0.baseAddress, 16, 0) }
        return answer
    }
}
