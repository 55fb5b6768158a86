import PipelineHost
import TestSupport
import Testing

@Suite("MemoryCache: a strict LRU by cost and count")
struct MemoryCacheTests {
    private func entry(bytes: Int, expiresIn seconds: Double = 60) -> CacheEntry {
        CacheEntry(
            image: EncodedImage(bytes: ImageBytes(copying: [UInt8](repeating: 7, count: bytes))),
            storedAt: 0, expiresAt: seconds)
    }

    @Test("the least recently used entry goes first when the cost limit is passed")
    func costLimit() {
        let cache = MemoryCache<String>(limits: .init(cost: 300, count: 100))
        cache.insert(entry(bytes: 100), for: "a")
        cache.insert(entry(bytes: 100), for: "b")
        cache.insert(entry(bytes: 100), for: "c")
        _ = cache.entry(for: "a")  // a is now the most recent
        cache.insert(entry(bytes: 100), for: "d")  // 400 > 300: b goes
        #expect(cache.keysByAge == ["c", "a", "d"])
        #expect(cache.totalCost == 300)
        #expect(cache.entry(for: "b") == nil)
    }

    @Test("keys count as well as images: long keys push entries out")
    func keyBytes() {
        let cache = MemoryCache<String>(limits: .init(cost: 1000, count: 100), keyCost: { $0.utf8.count })
        for index in 0..<10 { cache.insert(entry(bytes: 10), for: "\(index)" + String(repeating: "k", count: 289)) }
        #expect(cache.count == 3, "3 entries of 300 bytes fit in 1000")
        #expect(cache.totalCost == 900)
        cache.insert(entry(bytes: 10), for: String(repeating: "x", count: 2000))
        #expect(cache.count == 3, "an entry whose key alone passes the limit is not stored")
    }

    @Test("the count limit holds, and replacing an entry does not count twice")
    func countLimit() {
        let cache = MemoryCache<String>(limits: .init(cost: 1 << 20, count: 2))
        cache.insert(entry(bytes: 10), for: "a")
        cache.insert(entry(bytes: 20), for: "a")
        cache.insert(entry(bytes: 10), for: "b")
        #expect(cache.count == 2 && cache.totalCost == 30)
        cache.insert(entry(bytes: 10), for: "c")
        #expect(cache.keysByAge == ["b", "c"])
    }

    @Test("an entry larger than the whole limit is not kept, and nothing else is pushed out for it")
    func oversized() {
        let cache = MemoryCache<String>(limits: .init(cost: 100, count: 10))
        cache.insert(entry(bytes: 50), for: "a")
        cache.insert(entry(bytes: 500), for: "huge")
        #expect(cache.keysByAge == ["a"])
    }

    @Test("an expired entry is still returned, and says it is not fresh")
    func expiry() throws {
        let cache = MemoryCache<String>()
        cache.insert(entry(bytes: 10, expiresIn: 5), for: "a")
        let found = try #require(cache.entry(for: "a"))
        #expect(found.isFresh(at: 4) && !found.isFresh(at: 5))
    }
}
