import Foundation
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostRedis

/// A purge while work on its source is still under way, on two nodes sharing a real Redis:
/// a request after the purge, on either node, never joins or waits for that work.
@Suite(.serialized, .needs(.pixels, .network, .redis), .loopbackOrigin)
struct PurgeInFlightTests {
    let origin = LoopbackServer.fixture
    let redis: RedisServer

    init() async throws {
        redis = try await RedisServer()
    }

    @Test func requestsAfterAPurgeStartAnewAndWaitForNoLeaseOfTheWorkBeforeIt() async throws {
        let path = "/edited.jpg"
        origin.route(path, .held(gate: "old-version", .ok(Fixtures.quadrants(width: 320, height: 200))))
        // Leases that outlast the test: a request waiting for the old work's lease would wait
        // until the test lets that work go, never until a clock ran out.
        let leases = LeaseSettings(lease: .seconds(600), wait: .seconds(600))
        let a = try SharedTierTests.node(redis.url, leases: leases)
        let b = try SharedTierTests.node(redis.url, leases: leases)
        let request = ImageRequest(source: origin.url(path), profile: "thumb")
        let before = Task { try await a.pipeline.image(for: request) }
        #expect(await eventually { origin.requestCount(path) == 1 })
        #expect(await eventually { a.tier.held.count == 2 }, "node A leads the variant and the original")

        // The picture at the origin is replaced, and the source purged while A still fetches it.
        origin.route(path, .ok(Fixtures.painted(width: 320, height: 200, format: .jpeg) { _, _ in [0, 0, 0] }))
        let report = await a.pipeline.purge(sources: [origin.url(path)])
        #expect(report.failures.isEmpty, "\(report)")
        #expect(a.tier.held.count == 0, "the purge gave up A's leases of the source")
        #expect(
            try await redis.cli(["--scan", "--pattern", "pipelinehost:v1:lock:*"]).isEmpty,
            "no lease of the work begun before the purge is left in Redis")

        // Node B leads anew and fetches the new picture while A's old transfer is still held.
        let onB = Task { try await b.pipeline.image(for: request) }
        let fetchedAnew = await eventually(within: 60) { origin.requestCount(path) == 2 }
        #expect(fetchedAnew, "B waited for the old work: \(b.tier.stats)")
        guard fetchedAnew else {
            origin.open("old-version")
            return
        }
        let new = try await onB.value
        #expect(b.tier.stats.leasesWaited == 0 && b.tier.stats.leasesWon == 2, "\(b.tier.stats)")
        #expect(try #require(Fixtures.stats(new.bytes.array)).mean < 20, "the new, black picture")
        await b.pipeline.flushCache()

        // Node A, asked again, does not join its own old work: the new picture, from Redis.
        let again = Task { try await a.pipeline.image(for: request) }
        let answered = await eventually(within: 60) { await a.pipeline.stats().succeeded >= 1 }
        #expect(answered, "the request after the purge joined the work begun before it")
        origin.open("old-version")
        let fresh = try await again.value
        #expect(firstDifference(fresh.bytes, new.bytes) == nil && fresh.sharedHit && !fresh.coalesced)

        // The old work answers the request that asked before the purge, and stores nothing.
        let old = try await before.value
        #expect(old.bytes.array != new.bytes.array)
        await a.pipeline.flushCache()
        let last = try await a.pipeline.image(for: request)
        #expect(firstDifference(last.bytes, new.bytes) == nil, "the old work's late result was not stored")
        #expect(origin.requestCount(path) == 2)
        withExtendedLifetime((a.directory, b.directory)) {}
    }
}
