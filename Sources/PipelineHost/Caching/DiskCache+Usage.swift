import Glibc

/// The bytes a cache directory's entries take, shared by every process that writes to it: a
/// 24-byte "usage" file (the entries' total, the room reserved by writes in progress, and
/// updates since the last rescan), read and updated under flock(2) for a moment before and
/// after each write, never during one. So the size limit holds across processes, not only
/// within one: a writer reserves its entry's room first, and every writer counts the others'
/// reservations.
///
/// When the file is missing or unreadable, or every 1,024 updates, the total is measured again
/// by listing the entries and the reservations start from zero, so drift (a writer that died
/// between its two updates, entries removed by hand) does not last. `cache verify`, `prune` and
/// `clear` remove the file.
extension DiskCache {
    static let usageFile = "usage"
    static let rescanEvery: Int64 = 1024

    /// What the usage file holds.
    struct Usage {
        /// Bytes of the entries on disk.
        var total: Int
        /// Room reserved by writes in progress, in this process and others.
        var reserved: Int
    }

    /// Writes `entry`, first making room under `limit` by evicting the least recently used
    /// entries (down to 90%, so a full cache evicts in batches). An entry larger than the limit
    /// is not stored. Returns the directory's total afterwards.
    @discardableResult
    func store(_ entry: CacheEntry, key: String, layer: CacheLayer, limit: Int, source: String? = nil)
        throws(WriteError) -> Int
    {
        let name = Self.name(for: key)
        let header = try Self.header(entry, key: key, name: name, layer: layer, source: source)
        // The file's exact size: what is reserved is what is written.
        let estimate = header.count + entry.image.bytes.count
        guard estimate <= limit else { return 0 }
        try Self.makeDirectory(directory)
        let replaced = shard(of: name)?.regularFile(name).map { Int($0.st_size) } ?? 0
        // Reserve room for the entry, so writers in other processes count it meanwhile.
        updateUsage { known in
            var usage = known ?? Usage(total: measuredUsage(), reserved: 0)
            if usage.total + usage.reserved + estimate > limit {
                usage.total = evict(downTo: max(0, limit - limit / 10 - usage.reserved - estimate)).bytes
            }
            usage.reserved += estimate
            return usage
        }
        let written: Int
        do {
            written = try write(entry, name: name, header: header)
        } catch {
            updateUsage { known in known.map { Usage(total: $0.total, reserved: max(0, $0.reserved - estimate)) } }
            throw error
        }
        return updateUsage { known in
            known.map { Usage(total: max(0, $0.total + written - replaced), reserved: max(0, $0.reserved - estimate)) }
                ?? Usage(total: measuredUsage(), reserved: 0)
        }?.total ?? 0
    }

    /// Removes the usage file, so the next writer measures the directory.
    func forgetUsage() {
        _ = CacheDirectory.root(directory)?.removeFile(Self.usageFile)
    }

    /// The entries' bytes, by listing them.
    private func measuredUsage() -> Int { entryBytes }

    /// Runs `body` with the shared usage (nil when it must be measured) under the directory's
    /// lock, and stores what it returns; a nil answer leaves the file as it is.
    @discardableResult
    private func updateUsage(_ body: (Usage?) -> Usage?) -> Usage? {
        guard let root = CacheDirectory.root(directory) else { return body(nil) }
        let fd = root.openFile(Self.usageFile, O_RDWR | O_CREAT, mode: 0o644)
        guard fd >= 0 else { return body(nil) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { return body(nil) }
        }
        defer { flock(fd, LOCK_UN) }
        var words: (Int64, Int64, Int64) = (0, 0, 0)
        let read = withUnsafeMutableBytes(of: &words) { pread(fd, $0.baseAddress, 24, 0) }
        let (total, reserved, updates) = (
            Int64(littleEndian: words.0), Int64(littleEndian: words.1), Int64(littleEndian: words.2)
        )
        let sound = read == 24 && total >= 0 && reserved >= 0 && updates >= 0 && updates < Self.rescanEvery
        let known = sound ? Usage(total: Int(total), reserved: Int(reserved)) : nil
        guard let answer = body(known) else { return nil }
        words = (
            Int64(answer.total).littleEndian, Int64(answer.reserved).littleEndian,
            (known == nil ? 0 : updates + 1).littleEndian
        )
        _ = withUnsafeBytes(of: &words) { pwrite(fd, $0.baseAddress, 24, 0) }
        return answer
    }
}
