import Foundation
import PipelineHost
import PipelineHostRedis
import TestSupport
import Testing

/// The shared tier on a real redis-server (started on loopback for each test): two pipelines,
/// standing for two nodes, each with its own memory and disk, share what either made.
@Suite(.serialized, .needs(.pixels, .network, .redis), .loopbackOrigin) struct SharedTierTests {
    /// Transfers may last two minutes: an origin a test holds is let go by the test, never by
    /// a clock that a loaded machine can outrun.
    static let profile = """
        profile "thumb" {
          normalize  { drop_query = { "u", "t", "s", "p" } },
          fetch      { retries = 0, timeout = 120, low_speed_time = 120 },
          cache      { disk = true },
          decode     {},
          downsample { size = 48, fit = "cover" },
          encode     { format = "jpeg" },
          cache      { memory = true, disk = true },
        }
        """

    /// `profile` written into `directory` for serve nodes, which block private addresses unless
    /// a profile says otherwise: the test's origin is on loopback.
    static func serveProfile(in directory: TemporaryDirectory) throws -> String {
        try directory.write(
            "shared.lua",
            Array(
                profile.replacingOccurrences(of: "retries = 0,", with: "retries = 0, block_private = false,").utf8))
    }

    let origin = LoopbackServer.fixture
    let redis: RedisServer

    init() async throws {
        origin.route("/cover.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        redis = try await RedisServer()
    }

    /// A node: its own pipeline on `profile`, memory and disk directory, and a tier on
    /// `address`. A generous call timeout: the machine runs other tests at the same time, and a
    /// call that timed out would (rightly) make a node compute alone.
    static func node(
        _ address: String, breaker: CircuitBreaker = CircuitBreaker(), leases: LeaseSettings = LeaseSettings(),
        seal: EntrySeal? = nil
    ) throws -> (pipeline: Pipeline, tier: RedisTier, directory: TemporaryDirectory) {
        let client = RedisClient(
            address: try #require(RedisAddress(address)), timeout: RedisServer.callTimeout, breaker: breaker)
        let tier = RedisTier(client: client, leases: leases, seal: seal)
        let directory = try TemporaryDirectory()
        let settings = CacheSettings(directory: directory.path, additionalTiers: [tier])
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(Self.profile), configuration: PipelineConfiguration(cache: settings))
        return (pipeline, tier, directory)
    }

    @Test func aVariantMadeOnOneNodeIsServedByAnotherWithNoTransfer() async throws {
        let (first, firstTier, firstDirectory) = try Self.node(redis.url)
        let (second, secondTier, secondDirectory) = try Self.node(redis.url)
        let request = ImageRequest(source: origin.url("/cover.jpg?u=ann&t=a1&s=s1"), profile: "thumb")
        let made = try await first.image(for: request)
        await first.flushCache()
        #expect(firstTier.stats.misses >= 1)

        let salted = ImageRequest(source: origin.url("/cover.jpg?u=ann&t=b2&s=s2"), profile: "thumb")
        let served = try await second.image(for: salted)
        #expect(firstDifference(served.bytes, made.bytes) == nil)
        #expect(origin.requestCount("/cover.jpg") == 1, "the second node made no transfer")
        #expect(await second.stats().decodes == 0, "nor a decode")
        #expect(secondTier.stats.hits == 1)
        #expect(served.sharedHit && !served.diskHit && !served.memoryHit, "the shared tier answered")
        #expect(!made.sharedHit)
        withExtendedLifetime((firstDirectory, secondDirectory)) {}
    }

    @Test func redisHoldsNoCredential() async throws {
        let (pipeline, _, directory) = try Self.node(redis.url)
        let source = origin.url(
            "/cover.jpg?id=7&u=ann&t=tok-secret-1&s=salt-secret-2&p=enc:pass-secret-3&token=bearer-secret-4")
        _ = try await pipeline.image(for: ImageRequest(source: source, profile: "thumb"))
        await pipeline.flushCache()
        let stored = try await redis.dump()
        let values = stored.filter { $0.key.hasPrefix("pipelinehost:v1:{") }
        let indexes = stored.filter { $0.key.hasPrefix("pipelinehost:v1:src:{") }
        #expect(values.count == 2, "the original and the variant: \(stored.map(\.key))")
        #expect(indexes.count == 1 && stored.count == 3, "and the source's index, for purge: \(stored.map(\.key))")
        let members = try await redis.cli(["SMEMBERS", try #require(indexes.first).key])
        #expect(Set(members.split(separator: "\n").map(String.init)) == Set(values.map(\.key)))
        for (key, _) in values {
            #expect(
                key.hasPrefix("pipelinehost:v1:{") && key.hasSuffix("}") && key.count == "pipelinehost:v1:{}".count + 64
            )
        }
        for (key, value) in stored + [("members", members)] {
            for secret in ["secret", "u=ann", "ann&"] {
                #expect(!key.contains(secret) && !value.contains(secret), "\(secret) in \(key)")
            }
        }
        withExtendedLifetime(directory) {}
    }

    @Test func redisDownCostsNothingButTheTierAndTheBreakerOpens() async throws {
        await redis.stop()
        let breaker = CircuitBreaker(threshold: 3, cooldown: .seconds(60))
        let (pipeline, tier, directory) = try Self.node(redis.url, breaker: breaker)
        for id in 1...6 {
            let result = try await pipeline.image(
                for: ImageRequest(source: origin.url("/cover.jpg?id=\(id)"), profile: "thumb"))
            #expect(result.size == PixelSize(width: 48, height: 48))
        }
        await pipeline.flushCache()
        #expect(tier.stats.errors >= 3)
        #expect(breaker.timesOpened == 1 && breaker.isOpen)
        // Open: no call reaches the (dead) server, so the errors stop growing.
        let errors = tier.stats.errors
        _ = try await pipeline.image(for: ImageRequest(source: origin.url("/cover.jpg?id=99"), profile: "thumb"))
        #expect(tier.stats.errors == errors)
        withExtendedLifetime(directory) {}
    }

    @Test func theTierIsUsedAgainWhenRedisComesBack() async throws {
        let breaker = CircuitBreaker(threshold: 2, cooldown: .milliseconds(200))
        let (first, _, firstDirectory) = try Self.node(redis.url, breaker: breaker)
        await redis.stop()
        _ = try await first.image(for: ImageRequest(source: origin.url("/cover.jpg?id=1"), profile: "thumb"))
        _ = try await first.image(for: ImageRequest(source: origin.url("/cover.jpg?id=2"), profile: "thumb"))
        await first.flushCache()
        #expect(breaker.timesOpened >= 1)
        try await redis.start()
        // The cooldown is over: the next call is the probe that finds Redis back.
        #expect(await eventually { breaker.wouldAllowCall })
        _ = try await first.image(for: ImageRequest(source: origin.url("/cover.jpg?id=3"), profile: "thumb"))
        await first.flushCache()
        #expect(!breaker.isOpen)
        #expect(
            try await redis.cli(["DBSIZE"]).trimmingCharacters(in: .whitespacesAndNewlines) == "3",
            "id=3's original and variant, and its source's index")
        withExtendedLifetime(firstDirectory) {}
    }

    @Test func addressesParse() {
        #expect(RedisAddress("redis://127.0.0.1:6380/2") == RedisAddress("redis://127.0.0.1:6380/2"))
        let address = RedisAddress("redis://cache.internal")
        #expect(address?.host == "cache.internal" && address?.port == 6379 && address?.database == 0)
        #expect(RedisAddress("redis://[::1]:7000")?.host == "::1")
        // User information is accepted now (issue 29); RedisAuthTests covers it.
        #expect(RedisAddress("redis://user:pw@h:1")?.user == "user")
        for bad in ["http://h:1", "redis://", "redis://@", "redis://h:0", "redis://h:1/x", "redis://h:99999"] {
            #expect(RedisAddress(bad) == nil, "\(bad)")
        }
    }
}
