import Foundation
import PipelineHost
import TestSupport
import Testing

/// `Pipeline.purge` on one node: every original and variant of a source leaves memory and disk,
/// other sources stay, and work that began before the purge stores nothing after it.
@Suite(
    "A purge drops a source from memory and disk, and work begun before it stores nothing",
    .needs(.pixels, .network), .loopbackOrigin)
struct PurgeTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let gates = HoldGates()

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/purge-a.jpg", .ok(Fixtures.quadrants(width: 400, height: 300), contentType: "image/jpeg"))
        server.route("/purge-b.jpg", .ok(Fixtures.quadrants(width: 300, height: 400), contentType: "image/jpeg"))
    }

    func pipeline() throws -> Pipeline {
        let lua = """
            profile "small" { fetch {}, cache { disk = true }, decode {}, downsample { size = 32 }, encode {},
                              cache { memory = true, disk = true } }
            profile "held"  { fetch {}, cache { disk = true }, decode {}, hold { gate = "held" }, encode {},
                              cache { memory = true, disk = true } }
            """
        return Pipeline(
            profiles: try TestPipeline.load(lua, gates: gates),
            configuration: TestPipeline.configuration(cacheIn: directory))
    }

    @Test("every profile's entries of the source go, and another source's stay")
    func purgesOneSource() async throws {
        let pipeline = try pipeline()
        let (a, b) = (server.url("/purge-a.jpg"), server.url("/purge-b.jpg"))
        for source in [a, b] { _ = try await pipeline.image(for: ImageRequest(source: source, profile: "small")) }
        await pipeline.flushCache()
        #expect(DiskCache(directory: directory.path).entryPaths.count == 4)

        let report = await pipeline.purge(sources: [a])
        #expect(report.removed["memory"] == 1 && report.removed["disk"] == 2, "\(report)")
        #expect(report.failures.isEmpty)
        #expect(DiskCache(directory: directory.path).entryPaths.count == 2, "b's original and variant")

        let again = try await pipeline.image(for: ImageRequest(source: a, profile: "small"))
        #expect(!again.memoryHit && !again.diskHit)
        #expect(server.requestCount("/purge-a.jpg") == 2, "a was fetched again")
        #expect(try await pipeline.image(for: ImageRequest(source: b, profile: "small")).memoryHit)
    }

    @Test("work in flight at the purge answers its request, and stores nothing")
    func workInFlightStoresNothing() async throws {
        let pipeline = try pipeline()
        let source = server.url("/purge-a.jpg")
        let held = Task { try await pipeline.image(for: ImageRequest(source: source, profile: "held")) }
        await gates.waitUntilEntered("held")  // fetched, decoded; the variant is not made yet
        _ = await pipeline.purge(sources: [source])
        gates.open("held")
        #expect(try await held.value.size != nil, "the request that asked before the purge is answered")
        await pipeline.flushCache()
        #expect(DiskCache(directory: directory.path).entryPaths.isEmpty, "neither the original nor the variant")

        let next = try await pipeline.image(for: ImageRequest(source: source, profile: "held"))
        #expect(!next.memoryHit && !next.diskHit)
        #expect(server.requestCount("/purge-a.jpg") == 2, "a miss with one transfer after the purge")
    }

    @Test("while a purge is under way, a lookup of its source reads no tier")
    func lookupsDuringAPurgeReadNoTier() async throws {
        let tier = HeldPurgeTier(gates: gates)
        let lua = """
            profile "small" { fetch {}, cache { disk = true }, decode {}, downsample { size = 32 }, encode {},
                              cache { memory = true, disk = true } }
            """
        let settings = CacheSettings(directory: directory.path, additionalTiers: [tier])
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(lua, gates: gates), configuration: PipelineConfiguration(cache: settings))
        let source = server.url("/purge-b.jpg")
        _ = try await pipeline.image(for: ImageRequest(source: source, profile: "small"))
        await pipeline.flushCache()
        #expect(tier.count == 2, "the tier after disk holds the original and the variant")

        // The purge has cleared memory and disk and now waits inside the tier's own purge, whose
        // entries are still there: a request meanwhile must not be answered from them.
        let purge = Task { await pipeline.purge(sources: [source]) }
        await gates.waitUntilEntered("purge")
        let during = try await pipeline.image(for: ImageRequest(source: source, profile: "small"))
        #expect(!during.sharedHit && !during.memoryHit && !during.diskHit)
        #expect(server.requestCount("/purge-b.jpg") == 2, "fetched again, not served from the tier under purge")
        gates.open("purge")
        #expect(await purge.value.removed["held"] == 2)
    }
}

/// A tier after disk, in memory, whose purge waits at the test's "purge" gate before it deletes.
final class HeldPurgeTier: PurgeableTier {
    let name = "held"
    let gates: HoldGates
    private let entries = Locked<[StageKey: CacheEntry]>([:])

    init(gates: HoldGates) { self.gates = gates }

    var count: Int { entries.withLock { $0.count } }

    func keeps(_ point: CachePoint) -> Bool { true }

    func read(_ key: StageKey, at point: CachePoint) async -> CacheRead {
        entries.withLock { $0[key] }.map(CacheRead.hit) ?? .miss
    }

    func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        entries.withLock { $0[key] = entry }
    }

    func purge(_ purge: SourcePurge) async throws(PipelineError) -> Int {
        await gates.pass("purge")
        return entries.withLock { entries in
            let doomed = entries.keys.filter(purge.matches)
            for key in doomed { entries[key] = nil }
            return doomed.count
        }
    }
}
