/// What the key stages made of a request, so a request whose result is in memory skips them
/// (and the plan and chain) altogether: a memory hit is a memo lookup and a memory lookup.
///
/// It keeps no secret: the source is kept without its signers (subsonic_auth's password stays
/// with the stage, and signers run at fetch time) and without validators. Key stages are pure
/// functions of the source, so an entry goes stale only with its local file, whose version the
/// key holds (`FileVersion`): such an entry is checked against the file at each lookup. When
/// the memo is full (by count, or by the bytes its requests and keys take: a URL may be 60 KB
/// long) it starts over.
struct KeyMemo {
    struct Entry {
        /// The source as the key stages left it, minus signers.
        let origin: Source
        /// The final step's key and cache point.
        let key: StageKey
        let point: CachePoint
    }

    private var entries: [ImageRequest: Entry] = [:]
    private let limit: Int
    private let byteLimit: Int
    /// What the entries' requests, sources and keys take, about.
    private(set) var bytes = 0

    init(limit: Int = 10_000, byteLimit: Int = 16 << 20) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    var count: Int { entries.count }

    /// What the key stages made of `request`; nil when they have not run for it, or when its
    /// local file has changed since (a stat: a new version needs a new key).
    subscript(request: ImageRequest) -> Entry? {
        guard let entry = entries[request] else { return nil }
        if let version = entry.key.sourceVersion, FileVersion.of(entry.origin.location) != version { return nil }
        return entry
    }

    /// Remembers the chain of `request` when its final step keeps results in memory.
    mutating func remember(_ request: ImageRequest, chain: Chain) {
        guard let point = chain.caches.last ?? nil, point.memory, let key = chain.keys.last,
            entries[request]?.key != key
        else { return }
        let size = Self.size(request, chain.source, key)
        guard size <= byteLimit / 16 else { return }
        if let old = entries.removeValue(forKey: request) { bytes -= Self.size(request, old.origin, old.key) }
        if entries.count >= limit || bytes + size > byteLimit {
            entries.removeAll(keepingCapacity: true)
            bytes = 0
        }
        bytes += size
        var origin = chain.source
        origin.signers = []
        origin.validators = nil
        entries[request] = Entry(origin: origin, key: key, point: point)
    }

    private static func size(_ request: ImageRequest, _ source: Source, _ key: StageKey) -> Int {
        request.source.utf8.count + source.location.utf8.count + source.key.utf8.count + key.byteCount
    }
}
