import Foundation
import PipelineHost
import PipelineProfiles
import PipelineTesting
import Testing

/// Freshness is decided at a time the cache is given (`CacheSettings.clock`), so "stale after N
/// seconds" is tested by moving a clock, not by sleeping.
@Suite("Freshness, given the time")
struct FreshnessTests {
    let origin = FakeOrigin()
    /// The time of day the pipeline sees; tests move it.
    let time = Locked<Double>(1_000_000)

    func pipeline(_ lua: String) throws -> Pipeline {
        let profiles = try ProfileLoader(registry: FakeStages.registry(origin: origin)).load(
            code: Array(lua.utf8), name: "fresh.lua")
        let time = time
        return Pipeline(
            profiles: profiles,
            configuration: PipelineConfiguration(
                cache: CacheSettings(clock: WallClock { time.withLock { $0 } })))
    }

    func request(_ pipeline: Pipeline, _ path: String) async throws -> PipelineResult {
        try await pipeline.image(for: ImageRequest(source: "fake://h" + path, profile: "p"))
    }

    @Test("a variant with ttl = 60 answers from memory at 59 s and is made again at 61 s")
    func ttl() async throws {
        origin.serve("/t.jpg")
        let pipeline = try pipeline(
            #"profile "p" { fetch {}, decode {}, encode {}, cache { memory = true, ttl = 60 } }"#)
        _ = try await request(pipeline, "/t.jpg")
        time.withLock { $0 += 59 }
        #expect(try await request(pipeline, "/t.jpg").memoryHit)
        #expect(origin.started("/t.jpg") == 1)
        time.withLock { $0 += 2 }
        let later = try await request(pipeline, "/t.jpg")
        #expect(!later.memoryHit)
        #expect(origin.started("/t.jpg") == 2, "past its ttl the variant is made again")
    }

    @Test("an origin's max-age binds the variant made from it, from the time it arrived")
    func maxAge() async throws {
        origin.serve("/m.jpg", maxAge: 10)
        let pipeline = try pipeline(
            #"profile "p" { fetch {}, decode {}, encode {}, cache { memory = true, ttl = 3600 } }"#)
        let first = try await request(pipeline, "/m.jpg")
        #expect(first.expiresAt == 1_000_010)
        time.withLock { $0 += 9 }
        #expect(try await request(pipeline, "/m.jpg").memoryHit)
        time.withLock { $0 += 2 }
        #expect(try await !request(pipeline, "/m.jpg").memoryHit)
        #expect(origin.started("/m.jpg") == 2)
    }
}
