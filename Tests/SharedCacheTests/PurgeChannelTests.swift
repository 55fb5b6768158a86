import Foundation
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostRedis

/// Purges announced on the done channel of a real Redis, between nodes that share a secret: a
/// message anyone can publish (unsealed, replayed, or a flood) deletes nothing; one another node
/// sealed empties this node's copies.
@Suite(.serialized, .needs(.pixels, .network, .redis), .loopbackOrigin)
struct PurgeChannelTests {
    let origin = LoopbackServer.fixture
    let redis: RedisServer
    let seal = EntrySeal(secret: Array("the nodes' shared secret, 32 bytes or more".utf8))!

    init() async throws {
        origin.route("/hot.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        redis = try await RedisServer()
    }

    @Test func forgedOrReplayedPurgesDeleteNothingAndASealedOneDoes() async throws {
        let (a, b) = (try SharedTierTests.node(redis.url, seal: seal), try SharedTierTests.node(redis.url, seal: seal))
        let request = ImageRequest(source: origin.url("/hot.jpg"), profile: "thumb")
        _ = try await b.pipeline.image(for: request)
        #expect(try await b.pipeline.image(for: request).memoryHit)
        #expect(await eventually { b.tier.done.isSubscribed })
        let digest = SourcePurge.digest(try await b.pipeline.sourceKey(for: request))
        let now = Date().timeIntervalSince1970

        // Unsealed, as anyone who can publish on the Redis could send it; a flood of them; one
        // sealed with another secret; and a sealed one from two minutes ago, replayed.
        var forged = ["purge:evil:\(Int64(now * 1000)):\(digest)"]
        forged += (0..<50).map { "purge:evil\($0):\(Int64(now * 1000)):\(digest)" }
        let stranger = EntrySeal(secret: Array(repeating: 1, count: 32))!
        forged += PurgeMessage.write(digests: [digest], node: "evil", now: now, seal: stranger)
        forged += PurgeMessage.write(digests: [digest], node: "evil", now: now - 120, seal: seal)
        for message in forged { _ = try await redis.cli(["PUBLISH", DoneChannel.name, message]) }
        #expect(await eventually { b.tier.stats.purgeMessagesDropped == forged.count }, "\(b.tier.stats)")
        #expect(await b.pipeline.stats().purges == 0)
        #expect(try await b.pipeline.image(for: request).memoryHit, "the hot image is still in memory")
        #expect(origin.requestCount("/hot.jpg") == 1)

        // Another node's purge, sealed with the shared secret, is carried out here.
        let report = await a.pipeline.purge(sources: [origin.url("/hot.jpg")])
        #expect(report.failures.isEmpty, "\(report)")
        #expect(await eventually { await b.pipeline.stats().purges == 1 })
        let again = try await b.pipeline.image(for: request)
        #expect(!again.memoryHit && !again.diskHit && !again.sharedHit)
        #expect(origin.requestCount("/hot.jpg") == 2)
        #expect(b.tier.stats.purgeMessagesDropped == forged.count)
    }
}
