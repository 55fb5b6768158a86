import Foundation
import PipelineHost
import PipelineProfiles
import PipelineTesting
import Testing

/// A tier of a test's own, such as a store shared between machines would be: it keeps
/// variants in a dictionary shared by every pipeline given it, and counts what it is asked.
/// With `slow`, stores land only when `land()` is called, as over a network.
final class SharedTier: CacheTier {
    struct State {
        var entries: [String: CacheEntry] = [:]
        var reads = 0
        var stores = 0
        var inTransit: [(String, CacheEntry)] = []
        var drainers: [CheckedContinuation<Void, Never>] = []
        var drainWatchers: [CheckedContinuation<Void, Never>] = []
    }

    let name = "shared"
    let slow: Bool
    let state = Locked(State())

    init(slow: Bool = false) { self.slow = slow }

    func keeps(_ point: CachePoint) -> Bool { point.layer == .variant }

    func read(_ key: StageKey, at point: CachePoint) async -> CacheRead {
        state.withLock { state in
            state.reads += 1
            return state.entries[key.description].map(CacheRead.hit) ?? .miss
        }
    }

    func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        state.withLock { state in
            state.stores += 1
            if slow { state.inTransit.append((key.description, entry)) } else { state.entries[key.description] = entry }
        }
    }

    /// Lands every store in transit and answers whoever drains.
    func land() {
        let drainers = state.withLock { state in
            for (key, entry) in state.inTransit { state.entries[key] = entry }
            state.inTransit = []
            defer { state.drainers = [] }
            return state.drainers
        }
        for drainer in drainers { drainer.resume() }
    }

    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (idle, watchers) = state.withLock { state in
                if state.inTransit.isEmpty { return (true, [CheckedContinuation<Void, Never>]()) }
                state.drainers.append(continuation)
                defer { state.drainWatchers = [] }
                return (false, state.drainWatchers)
            }
            if idle { continuation.resume() }
            for watcher in watchers { watcher.resume() }
        }
    }

    /// Returns once a drain waits on a store in transit.
    func drainStarted() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state in
                if !state.drainers.isEmpty { return true }
                state.drainWatchers.append(continuation)
                return false
            }
            if waiting { continuation.resume() }
        }
    }

    var reads: Int { state.withLock { $0.reads } }
    var stored: Int { state.withLock { $0.entries.count } }
}

/// A cache tier of the host's own plugs in through `CacheSettings.additionalTiers`: looked in
/// after memory and disk, filled when a request succeeds, drained by `flushCache()`.
@Suite("Cache tiers: a third tier plugs in")
struct CacheTierTests {
    let origin = FakeOrigin()
    static let lua = #"profile "p" { fetch {}, decode {}, encode {}, cache { memory = true } }"#

    func pipeline(_ tier: SharedTier) throws -> Pipeline {
        let profiles = try ProfileLoader(registry: FakeStages.registry(origin: origin)).load(
            code: Array(Self.lua.utf8), name: "tiers.lua")
        return Pipeline(
            profiles: profiles, configuration: PipelineConfiguration(cache: CacheSettings(additionalTiers: [tier])))
    }

    @Test("a second pipeline is served from the shared tier with no fetch, then from its own memory")
    func sharedBetweenPipelines() async throws {
        origin.serve("/a.jpg")
        let tier = SharedTier()
        let first = try pipeline(tier)
        let made = try await first.image(for: ImageRequest(source: "fake://h/a.jpg", profile: "p"))
        await first.flushCache()
        #expect(tier.stored == 1)
        #expect(tier.reads == 1, "the first request looked, and missed")

        let second = try pipeline(tier)
        let served = try await second.image(for: ImageRequest(source: "fake://h/a.jpg", profile: "p"))
        #expect(served.bytes.array == made.bytes.array)
        #expect(!served.memoryHit && !served.diskHit)
        #expect(origin.started("/a.jpg") == 1, "no second fetch")
        #expect(tier.reads == 2)

        let again = try await second.image(for: ImageRequest(source: "fake://h/a.jpg", profile: "p"))
        #expect(again.memoryHit, "the shared hit was copied into memory")
        #expect(tier.reads == 2, "memory answered before the shared tier was asked")
        #expect(await second.stats().decodes == 0)
    }

    @Test("flushCache waits for a slow tier's stores to land")
    func drainWaitsForTheTier() async throws {
        origin.serve("/b.jpg")
        let tier = SharedTier(slow: true)
        let pipeline = try pipeline(tier)
        _ = try await pipeline.image(for: ImageRequest(source: "fake://h/b.jpg", profile: "p"))
        // What the tier holds at the moment flushCache returns: the store must have landed by then.
        let flushing = Task {
            await pipeline.flushCache()
            return tier.stored
        }
        // The flush has reached the tier and waits on its drain; the store is still in transit.
        await tier.drainStarted()
        #expect(tier.stored == 0)
        tier.land()
        #expect(await flushing.value == 1, "flushCache returned before the tier's store landed")
    }

    @Test("a failed request stores nothing in any tier")
    func failuresAreNotStored() async throws {
        origin.fail("/c.jpg", with: PipelineError(.httpStatus, "HTTP 404"))
        let tier = SharedTier()
        let pipeline = try pipeline(tier)
        await #expect(throws: PipelineError.self) {
            try await pipeline.image(for: ImageRequest(source: "fake://h/c.jpg", profile: "p"))
        }
        await pipeline.flushCache()
        #expect(tier.stored == 0 && tier.state.withLock { $0.stores } == 0)
    }
}

/// A key stage that counts its runs: `count {}` in a profile.
enum CountingKeyPlugin: PipelinePlugin {
    static let runs = Locked(0)

    struct Count: SourceRewriter {
        func rewrite(_ source: Source) throws -> Source {
            CountingKeyPlugin.runs.withLock { $0 += 1 }
            return source
        }
    }

    static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "count", summary: "Count key-stage runs.", input: .source, output: .source,
                parameters: [], make: { _ in Count() }))
    }
}

/// A memory hit is a memo lookup and a memory lookup: the plan, the key stages and the chain
/// were worked out the first time, and are not worked out again.
@Suite("Memory hits skip the key stages")
struct MemoryHitPathTests {
    let origin = FakeOrigin()

    @Test("the second request is a memory hit without running its key stages; a miss runs them again")
    func keyStagesOnce() async throws {
        origin.serve("/m.jpg")
        let lua = #"profile "p" { count {}, fetch {}, decode {}, encode {}, cache { memory = true } }"#
        let profiles = try ProfileLoader(registry: FakeStages.registry(origin: origin, extra: [CountingKeyPlugin.self]))
            .load(code: Array(lua.utf8), name: "memo.lua")
        let pipeline = Pipeline(profiles: profiles)
        let request = ImageRequest(source: "fake://h/m.jpg?token=secret", profile: "p")
        let before = CountingKeyPlugin.runs.withLock { $0 }
        let made = try await pipeline.image(for: request)
        let hit = try await pipeline.image(for: request)
        #expect(hit.memoryHit && hit.bytes.array == made.bytes.array)
        #expect(hit.key == made.key && hit.source == made.source)
        #expect(hit.source.contains("token=REDACTED"))
        #expect(CountingKeyPlugin.runs.withLock { $0 } - before == 1)
        let stats = await pipeline.stats()
        #expect((stats.memoryLookups, stats.memoryHits) == (2, 1), "each lookup counted once")

        // Another request (an override) is not the same memo entry: its key stages run.
        _ = try await pipeline.image(
            for: ImageRequest(
                source: "fake://h/m.jpg?token=secret", profile: "p",
                overrides: ["encode": [:]]))
        #expect(CountingKeyPlugin.runs.withLock { $0 } - before == 2)
    }
}
