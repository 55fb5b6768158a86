/// What the key stages made of a request, so a request whose result is in memory skips them
/// (and the plan and chain) altogether: a memory hit is a memo lookup and a memory lookup.
///
/// It keeps no secret: the source is kept without its signers (subsonic_auth's password stays
/// with the stage, and signers run at fetch time) and without validators. Key stages are pure
/// functions of the source, so an entry never goes stale; when the memo is full (by count, or
/// by the bytes its requests and keys take: a URL may be 60 KB long) it starts over.
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

    subscript(request: ImageRequest) -> Entry? { entries[request] }

    /// Remembers the chain of `request` when its final step keeps results in memory.
    mutating func remember(_ request: ImageRequest, chain: Chain) {
        guard let point = chain.caches.last ?? nil, point.memory, let key = chain.keys.last, entries[request] == nil
        else { return }
        let size =
            request.source.utf8.count + chain.source.location.utf8.count + chain.source.key.utf8.count + key.byteCount
        guard size <= byteLimit / 16 else { return }
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
}
