import Crypto
import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Original bytes and variants on disk, one self-contained file per entry (`DiskEntryFormat`).
///
/// Safe for several processes on one directory without a lock: an entry is written to a
/// temporary file, fsynced and renamed into place, so a reader sees a whole entry or none, and
/// there is no shared index to corrupt. Last access is the file's modification time, touched on
/// every hit; eviction removes the least recently used files.
///
/// Every method blocks on file I/O: call them off Swift's cooperative pool.
public struct DiskCache: Sendable {
    /// The cache's root directory (it holds `entries/` and `tmp/`).
    public let directory: String

    /// A disk cache in `directory`, which is created on the first write.
    public init(directory: String) { self.directory = directory }

    /// `$XDG_CACHE_HOME/pipelinehost`, else `~/.cache/pipelinehost`.
    public static var defaultDirectory: String {
        if let xdg = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            return xdg + "/pipelinehost"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "."
        return home + "/.cache/pipelinehost"
    }

    var entriesDirectory: String { directory + "/entries" }
    var temporaryDirectory: String { directory + "/tmp" }

    /// The file name for a key: its SHA-256 in hex, so nothing in a key reaches a path.
    static func name(for key: String) -> String {
        SHA256.hash(data: Array(key.utf8)).hexDigits
    }

    func path(forName name: String) -> String { "\(entriesDirectory)/\(name.prefix(2))/\(name)" }

    /// The shard directory an entry name lives in, opened without following symlinks.
    func shard(of name: String) -> CacheDirectory? {
        CacheDirectory.root(directory)?.subdirectory("entries")?.subdirectory(String(name.prefix(2)))
    }

    /// The entry for `key`, checked against its checksum; marks it recently used. A file that
    /// fails its checksum is removed and reported `corrupt`.
    public func read(key: String) -> CacheRead {
        let name = Self.name(for: key)
        guard let shard = shard(of: name) else { return .miss }
        let fd = shard.openFile(name, O_RDONLY)
        guard fd >= 0 else { return .miss }
        defer { close(fd) }
        guard let file = Self.readAll(fd) else { return .miss }
        guard let (_, entry) = DiskEntryFormat.decode(file, name: name) else {
            shard.removeFile(name)
            return .corrupt
        }
        futimens(fd, nil)
        return .hit(entry)
    }

    /// Why a write failed; the request goes on without storing.
    public struct WriteError: Error, CustomStringConvertible {
        /// The failure, for a person: "cannot create ...: No space left on device".
        public let description: String
    }

    /// Stores `entry` atomically and returns the bytes it takes on disk. On failure (a full
    /// disk, a read-only directory) nothing is left behind and the old entry, if any, stays.
    @discardableResult
    public func write(_ entry: CacheEntry, key: String, layer: CacheLayer) throws(WriteError) -> Int {
        let name = Self.name(for: key)
        return try write(entry, name: name, header: try Self.header(entry, key: key, name: name, layer: layer))
    }

    /// Everything in an entry's file before its bytes.
    static func header(_ entry: CacheEntry, key: String, name: String, layer: CacheLayer, source: String? = nil)
        throws(WriteError) -> [UInt8]
    {
        do {
            return try DiskEntryFormat.header(entry, key: key, name: name, layer: layer, source: source)
        } catch {
            throw WriteError(description: "cannot encode cache metadata: \(error)")
        }
    }

    /// Writes an entry whose header is made; returns the bytes it takes.
    func write(_ entry: CacheEntry, name: String, header: [UInt8]) throws(WriteError) -> Int {
        try Self.makeDirectory(directory)
        guard let root = CacheDirectory.root(directory) else { throw Self.failure("open \(directory)") }
        let temporaries = try root.makeSubdirectory("tmp")
        let shard = try root.makeSubdirectory("entries").makeSubdirectory(String(name.prefix(2)))
        let temporary = "\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let bytes = entry.image.bytes
        let written = header.withUnsafeBytes { head in
            Result { () throws(AtomicWrite.Failure) in
                try AtomicWrite.write(
                    [head, bytes.buffer], via: .init(directory: temporaries.fd, temporary),
                    to: .init(directory: shard.fd, name), sync: true)
            }
        }
        if case .failure(let error) = written {
            let place =
                error.step == "rename"
                ? "rename into \(path(forName: name))" : "\(error.step) \(temporaryDirectory)/\(temporary)"
            throw WriteError(description: "cannot \(place): \(error.reason)")
        }
        return header.count + bytes.count
    }

    /// Gives the entry for `key` new freshness in place: 24 bytes at a fixed offset, the bytes
    /// and metadata untouched, and marks it recently used. False when there is no such entry in
    /// this format (gone, or a "PHCACHE1" file): then write the whole entry instead.
    public func refresh(key: String, storedAt: Double, expiresAt: Double) -> Bool {
        let name = Self.name(for: key)
        guard let shard = shard(of: name) else { return false }
        let fd = shard.openFile(name, O_RDWR)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: DiskEntryFormat.headerLength)
        guard pread(fd, &head, head.count, 0) == head.count, DiskEntryFormat.layout(head)?.hasFreshness == true else {
            return false
        }
        let block = DiskEntryFormat.freshness(storedAt: storedAt, expiresAt: expiresAt)
        guard pwrite(fd, block, block.count, off_t(DiskEntryFormat.freshnessOffset)) == block.count else {
            return false
        }
        futimens(fd, nil)
        return true
    }

    /// Removes least recently used entries until the entries take at most `target` bytes.
    /// Returns how many it removed and the bytes the entries take afterwards.
    @discardableResult
    public func evict(downTo target: Int) -> (removed: Int, bytes: Int) {
        var files = entryFiles().sorted { $0.accessed < $1.accessed }[...]
        var total = files.reduce(0) { $0 + $1.bytes }, removed = 0
        while total > target, let file = files.popFirst() {
            guard remove(file) || errno == ENOENT else { continue }
            total -= file.bytes
            removed += 1
        }
        return (removed, total)
    }

    /// An entry file found by listing the cache.
    struct EntryFile {
        let shard: String
        let name: String
        let bytes: Int
        let accessed: Double
        let path: String
    }

    /// Entry files with their size and last access, found by listing the directory. Only
    /// regular files named like entries, in real shard directories, count: a symlink or a
    /// stray file is never read, counted or removed.
    func entryFiles() -> [EntryFile] {
        guard let entries = CacheDirectory.root(directory)?.subdirectory("entries") else { return [] }
        var files: [EntryFile] = []
        for shardName in entries.names() where Self.isShardName(shardName) {
            guard let shard = entries.subdirectory(shardName) else { continue }
            for name in shard.names() where Self.isEntryName(name) && name.hasPrefix(shardName) {
                guard let info = shard.regularFile(name) else { continue }
                let accessed = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
                files.append(
                    EntryFile(
                        shard: shardName, name: name, bytes: Int(info.st_size), accessed: accessed,
                        path: "\(entriesDirectory)/\(shardName)/\(name)"))
            }
        }
        return files
    }

    /// Removes one entry file found by `entryFiles`, through its shard directory.
    func remove(_ file: EntryFile) -> Bool {
        shard(of: file.name)?.removeFile(file.name) ?? false
    }

    /// Opens an entry file for reading, without following symlinks; -1 when it is gone.
    func open(_ file: EntryFile) -> Int32 {
        shard(of: file.name)?.openFile(file.name, O_RDONLY) ?? -1
    }

    /// Temporary files of writers that died before renaming them, older than `age` seconds.
    func abandonedTemporaries(olderThan age: Double) -> [String] {
        guard let temporaries = CacheDirectory.root(directory)?.subdirectory("tmp") else { return [] }
        let now = wallClock()
        return temporaries.names().filter { name in
            guard Self.isTemporaryName(name), let info = temporaries.regularFile(name) else { return false }
            return now - Double(info.st_mtim.tv_sec) > age
        }
    }

    /// Removes temporary files by name, as `abandonedTemporaries` lists them.
    func removeTemporaries(_ names: [String]) -> Int {
        guard let temporaries = CacheDirectory.root(directory)?.subdirectory("tmp") else { return 0 }
        return names.filter { temporaries.removeFile($0) }.count
    }

    /// Temporary files now, in progress or abandoned.
    var temporaryCount: Int {
        guard let temporaries = CacheDirectory.root(directory)?.subdirectory("tmp") else { return 0 }
        return temporaries.names().filter { Self.isTemporaryName($0) && temporaries.regularFile($0) != nil }.count
    }

    // MARK: names

    private static func isHex(_ text: Substring.UTF8View) -> Bool {
        text.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }

    static func isShardName(_ name: String) -> Bool { name.utf8.count == 2 && isHex(Substring(name).utf8) }
    static func isEntryName(_ name: String) -> Bool { name.utf8.count == 64 && isHex(Substring(name).utf8) }

    /// "<entry name>.<pid>.<random>", as `write` makes them.
    static func isTemporaryName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && isEntryName(String(parts[0]))
            && parts.dropFirst().allSatisfy {
                !$0.isEmpty && $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            }
    }

    // MARK: POSIX helpers

    static func makeDirectory(_ path: String) throws(WriteError) {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        if errno == ENOENT, let parent = path.lastIndex(of: "/"), parent > path.startIndex {
            try makeDirectory(String(path[..<parent]))
            if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        }
        throw failure("create directory \(path)")
    }

    static func failure(_ what: String) -> WriteError {
        WriteError(description: "cannot \(what): \(String(cString: strerror(errno)))")
    }

    /// The whole file in one malloc'd buffer, or nil when it cannot be read.
    static func readAll(_ fd: Int32) -> ImageBytes? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        guard size > 0, let pointer = malloc(size) else { return nil }
        var offset = 0
        while offset < size {
            let n = Glibc.read(fd, pointer + offset, size - offset)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            offset += n
        }
        guard offset == size else {
            free(pointer)
            return nil
        }
        return ImageBytes(adopting: pointer, count: size) { free($0) }
    }
}
