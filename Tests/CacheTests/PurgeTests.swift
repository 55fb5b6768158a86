import Foundation
import PipelineHost
import TestSupport
import Testing

/// `Pipeline.purge` on one node: every original and variant of a source leaves memory and disk,
/// other sources stay, and work that began before the purge stores nothing after it.
@Suite(
    "A purge drops a source from memory and disk, and work begun before it stores nothing",
    .tags(.pixels, .network), .notInFastRun, .loopbackOrigin)
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
}
