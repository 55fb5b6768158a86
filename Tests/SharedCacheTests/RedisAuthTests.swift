import Foundation
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostRedis

/// AUTH on every connection the tier opens, the done channel's subscriber included.
@Suite(.serialized, .needs(.pixels, .network, .redis), .loopbackOrigin, .hangLimit)
struct RedisAuthTests {
    let origin = LoopbackServer.fixture

    @Test func aWaiterOnAPasswordProtectedRedisWakesByTheDoneChannel() async throws {
        let redis = try await RedisServer(password: "auth-pw-31")
        defer { redis.stopNow() }
        try await redis.addUser("node", password: "node-pw-9")
        origin.route("/auth-held.jpg", .held(gate: "auth-held", .ok(Fixtures.quadrants(width: 320, height: 200))))
        let address = try #require(RedisAddress("redis://node@127.0.0.1:\(redis.port)")).withPassword("node-pw-9")
        // Polling every 10 minutes: only the done channel, subscribed with the same AUTH, wakes the
        // waiter within the suite's time limit.
        let nodes = try (0..<2).map { _ in
            let tier = RedisTier(
                client: RedisClient(address: address, timeout: RedisServer.callTimeout),
                leases: LeaseSettings(wait: .seconds(3600), poll: .seconds(600)))
            let directory = try TemporaryDirectory()
            let pipeline = Pipeline(
                profiles: try TestPipeline.load(SharedTierTests.profile),
                configuration: PipelineConfiguration(
                    cache: CacheSettings(directory: directory.path, additionalTiers: [tier])))
            return (pipeline, tier, directory)
        }
        let request = ImageRequest(source: origin.url("/auth-held.jpg"), profile: "thumb")
        // Node 0 leads: its transfer is held. Node 1 waits for it, subscribed, before the transfer is let go.
        async let first = nodes[0].0.image(for: request)
        #expect(await eventually { origin.requestCount("/auth-held.jpg") == 1 })
        async let second = nodes[1].0.image(for: request)
        #expect(await eventually { nodes[1].1.done.waiterCount == 1 && nodes[1].1.done.isSubscribed })
        origin.open("auth-held")
        _ = try await (first, second)
        #expect(nodes[1].1.doneMessages >= 1)
        #expect(origin.requestCount("/auth-held.jpg") == 1)
        #expect(await RedisClient(address: address, timeout: RedisServer.callTimeout).credentialProblem() == nil)
        let wrong = try #require(RedisAddress("redis://node@127.0.0.1:\(redis.port)")).withPassword("nope")
        #expect(
            await RedisClient(address: wrong, timeout: RedisServer.callTimeout).credentialProblem()?.contains(
                "refused the credentials") == true)
    }

    /// A node of the fleet: sealed with `secret`, or not (a writer that does not know it).
    func node(_ redis: RedisServer, secret: String?) throws -> (Pipeline, TemporaryDirectory) {
        let tier = RedisTier(
            client: RedisClient(address: try #require(RedisAddress(redis.url)), timeout: RedisServer.callTimeout),
            seal: secret.flatMap { EntrySeal(secret: Array($0.utf8)) })
        let directory = try TemporaryDirectory()
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(SharedTierTests.profile),
            configuration: PipelineConfiguration(
                cache: CacheSettings(directory: directory.path, additionalTiers: [tier])))
        return (pipeline, directory)
    }

    @Test func aForgedValueIsRefusedWhenTheFleetHasASecret() async throws {
        let redis = try await RedisServer()
        defer { redis.stopNow() }
        let secret = String(repeating: "s3cr", count: 8)
        let red = Fixtures.painted(width: 64, height: 64) { _, _ in [220, 20, 20] }
        let blue = Fixtures.painted(width: 64, height: 64) { _, _ in [20, 20, 220] }
        let request = ImageRequest(source: origin.url("/forge.png"), profile: "thumb")
        func colour(_ result: PipelineResult) -> [UInt8]? {
            Fixtures.decoded(result.bytes.array).map { Array($0[24, 24].prefix(3)) }
        }
        func isRed(_ result: PipelineResult) -> Bool { (colour(result)?.first ?? 0) > 150 }

        origin.route("/forge.png", .ok(red))
        let (a, keepA) = try node(redis, secret: secret)
        #expect(isRed(try await a.image(for: request)))
        await a.flushCache()
        // A writer without the secret puts its own picture, with a matching SHA-256, under the same key.
        origin.route("/forge.png", .ok(blue))
        let (forger, keepF) = try node(redis, secret: nil)
        #expect(!isRed(try await forger.image(for: request)))
        await forger.flushCache()
        origin.route("/forge.png", .ok(red))

        // A node without the secret serves the forgery from Redis; a sealed node refuses it and does the work.
        let (trusting, keepT) = try node(redis, secret: nil)
        let fooled = try await trusting.image(for: request)
        #expect(fooled.sharedHit && !isRed(fooled))
        let (b, keepB) = try node(redis, secret: secret)
        let before = origin.requestCount("/forge.png")
        let checked = try await b.image(for: request)
        #expect(!checked.sharedHit && isRed(checked), "\(String(describing: colour(checked)))")
        #expect(await b.stats().corruptEntries >= 1)
        #expect(origin.requestCount("/forge.png") == before + 1)
        withExtendedLifetime((keepA, keepF, keepT, keepB)) {}
    }

    @Test func aForgedNegativeEntryDoesNotFailASealedNode() async throws {
        let redis = try await RedisServer()
        defer { redis.stopNow() }
        let secret = String(repeating: "k9", count: 16)
        let request = ImageRequest(source: origin.url("/forged-negative.png"), profile: "thumb")
        origin.route("/forged-negative.png", .status(404))
        let (forger, keepF) = try node(redis, secret: nil)
        await #expect(throws: PipelineError.self) { try await forger.image(for: request) }
        await forger.flushCache()
        #expect(try await redis.cli(["--scan"]).contains("pipelinehost:v1:neg:"))
        origin.route("/forged-negative.png", .ok(Fixtures.painted(width: 64, height: 64) { _, _ in [1, 2, 3] }))
        // Believed without a secret; not with one.
        let (trusting, keepT) = try node(redis, secret: nil)
        await #expect(throws: PipelineError.self) { try await trusting.image(for: request) }
        let (sealed, keepS) = try node(redis, secret: secret)
        _ = try await sealed.image(for: request)
        withExtendedLifetime((keepF, keepT, keepS)) {}
    }

    @Test func theFleetsSecretsAreNeverReadableByProfiles() {
        for name in ["PIPELINEHOST_REDIS_PASSWORD", "PIPELINEHOST_SHARED_SECRET"] {
            #expect(EnvironmentAccess.problem(name) != nil, "\(name)")
        }
        #expect(EntrySeal(secret: Array("short".utf8)) == nil)
    }

    @Test func addressesNeverPrintThePassword() throws {
        let address = try #require(RedisAddress("redis://ann:s%40cret@cache.internal:6380/2"))
        #expect(address.user == "ann" && address.password == "s@cret" && address.passwordInURL)
        #expect(address.description == "redis://ann@cache.internal:6380/2")
        #expect(address.withPassword("other").password == "s@cret")
        let plain = try #require(RedisAddress("redis://cache.internal")).withPassword("env-pw")
        #expect(
            plain.password == "env-pw" && !plain.passwordInURL && plain.description == "redis://cache.internal:6379/0")
        #expect(RedisAddress("redis://ann:@host") == nil && RedisAddress("redis://ann:%zz@host") == nil)
    }
}
