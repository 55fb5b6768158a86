/// What the key stages made of a request, so a request whose result is in memory skips them
/// (and the plan and chain) altogether: a memory hit is a memo lookup and a memory lookup.
///
/// It keeps no secret: the source is kept without its signers (subsonic_auth's password stays
/// with the stage, and signers run at fetch time) and without validators. Key stages are pure
/// functions of the source, so an entry never goes stale; when the memo is full it starts over.
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

    init(limit: Int = 10_000) { self.limit = limit }

    subscript(request: ImageRequest) -> Entry? { entries[request] }

    /// Remembers the chain of `request` when its final step keeps results in memory.
    mutating func remember(_ request: ImageRequest, chain: Chain) {
        guard let point = chain.caches.last ?? nil, point.memory, let key = chain.keys.last else { return }
        if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
        var origin = chain.source
        origin.signers = []
        origin.validators = nil
        entries[request] = Entry(origin: origin, key: key, point: point)
    }
}
