import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `pipelinehost cache stats|verify|clear|prune`: whole-directory operations.
extension DiskCache {
    /// What `report()` counts in a cache directory.
    public struct Report: Sendable, Equatable {
        /// Entry files found.
        public var entries = 0
        /// Entries that hold original bytes.
        public var originals = 0
        /// Entries that hold display-ready variants.
        public var variants = 0
        /// Entries whose header cannot be read (`verify` checks whole files).
        public var unreadable = 0
        /// Bytes the entries take on disk.
        public var bytes = 0
        /// Temporary files: writes in progress, or left by a writer that died.
        public var temporaries = 0
    }

    /// Counts entries by layer from their headers, without reading the bodies.
    public func report() -> Report {
        var report = Report()
        for file in entryFiles() {
            report.entries += 1
            report.bytes += file.bytes
            switch layer(of: file) {
            case .original: report.originals += 1
            case .variant: report.variants += 1
            case nil: report.unreadable += 1
            }
        }
        report.temporaries = temporaryCount
        return report
    }

    /// What `verify()` did.
    public struct Verification: Sendable, Equatable {
        /// Entries read in full.
        public var checked = 0
        /// Entries whose checksum, length or header did not match; each was removed.
        public var corruptRemoved = 0
        /// Temporary files older than an hour, left by writers that died; removed.
        public var abandonedRemoved = 0
    }

    /// Reads every entry in full and removes the unsound ones.
    public func verify() -> Verification {
        var result = Verification()
        for file in entryFiles() {
            result.checked += 1
            let fd = open(file)
            guard fd >= 0 else { continue }  // evicted meanwhile by another process
            let bytes = Self.readAll(fd)
            close(fd)
            if bytes.flatMap({ DiskEntryFormat.decode($0, name: file.name) }) == nil, remove(file) {
                result.corruptRemoved += 1
            }
        }
        result.abandonedRemoved = removeTemporaries(abandonedTemporaries(olderThan: 3600))
        forgetUsage()
        return result
    }

    /// The bytes the entries take, from one listing (no file is opened).
    public var entryBytes: Int { entryFiles().reduce(0) { $0 + $1.bytes } }

    /// The path of every entry file.
    public var entryPaths: [String] { entryFiles().map(\.path) }

    /// `cache prune`: evicts least recently used entries down to `target` bytes, then has the
    /// next writer measure the directory again.
    @discardableResult
    public func prune(downTo target: Int) -> (removed: Int, bytes: Int) {
        defer { forgetUsage() }
        return evict(downTo: target)
    }

    /// Removes every entry; returns how many.
    @discardableResult
    public func clear() -> Int {
        var removed = 0
        for file in entryFiles() where remove(file) { removed += 1 }
        _ = removeTemporaries(abandonedTemporaries(olderThan: 3600))
        forgetUsage()
        return removed
    }

    /// Removes every entry of the purged sources: those whose metadata names one of their
    /// digests, and older entries (without one) whose redacted key starts with a source key the
    /// purge knows. Returns how many. Reads each entry's header, not its bytes.
    public func purge(_ purge: SourcePurge) -> Int {
        var removed = 0
        for file in entryFiles() {
            guard let metadata = metadata(of: file), purge.matches(metadata) else { continue }
            if remove(file) { removed += 1 }
        }
        if removed > 0 { forgetUsage() }
        return removed
    }

    /// The layer written in an entry's metadata, read from its header alone.
    func layer(of file: EntryFile) -> CacheLayer? { metadata(of: file)?.layer }

    /// An entry's metadata, read from its header alone.
    func metadata(of file: EntryFile) -> DiskEntryFormat.Metadata? {
        let fd = open(file)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: DiskEntryFormat.headerLength)
        guard Glibc.read(fd, &head, head.count) == head.count, let layout = DiskEntryFormat.layout(head),
            layout.metadataLength > 0, layout.metadataLength < 1 << 20
        else { return nil }
        let length = layout.metadataLength
        var json = [UInt8](repeating: 0, count: length)
        guard pread(fd, &json, length, off_t(layout.metadataOffset)) == length,
            let metadata = try? JSONDecoder().decode(DiskEntryFormat.Metadata.self, from: Data(json))
        else { return nil }
        return metadata
    }
}
