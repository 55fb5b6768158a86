import MetricsTestKit
import PipelineHost
import TestSupport
import Testing

@Suite(
    "Metrics: --stats figures and swift-metrics agree on a known workload", .hangLimit,
    .needs(.pixels, .network), .loopbackOrigin)
struct MetricsTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let metrics = TestMetrics()
    let image = Fixtures.quadrants(width: 1600, height: 1200)

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/held.jpg", .held(gate: "three", .ok(image, contentType: "image/jpeg")))
        server.route("/other.jpg", .ok(Fixtures.quadrants(width: 200, height: 100), contentType: "image/jpeg"))
    }

    /// Three concurrent salted requests for one image (one transfer, two coalesced), the same
    /// image again (a memory hit), another image, and a 404.
    func runWorkload() async throws -> Pipeline {
        let profiles = try TestPipeline.load(
            TestPipeline.thumbnail(size: 100, extra: "", fetchTimeout: 120).replacingOccurrences(
                of: "encode     { format = \"jpeg\" },",
                with: "encode     { format = \"jpeg\" },\n  cache { memory = true },"))
        var configuration = TestPipeline.configuration(cacheIn: directory)
        configuration.metrics = metrics
        let pipeline = Pipeline(profiles: profiles, configuration: configuration)
        func request(_ path: String) -> ImageRequest { ImageRequest(source: server.url(path), profile: "thumbnail") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for salt in 1...3 { group.addTask { _ = try await pipeline.image(for: request("/held.jpg?s=\(salt)")) } }
            await pipeline.waitForActivity { $0.waitingRequests == 3 }
            server.open("three")
            try await group.waitForAll()
        }
        let hit = try await pipeline.image(for: request("/held.jpg?s=4"))
        #expect(hit.memoryHit)
        _ = try await pipeline.image(for: request("/other.jpg"))
        await #expect(throws: PipelineError.self) { try await pipeline.image(for: request("/missing.jpg")) }
        return pipeline
    }

    @Test("the stats count the workload")
    func stats() async throws {
        let stats = await (try runWorkload()).stats()
        #expect((stats.requests, stats.succeeded, stats.failed, stats.cancelled) == (6, 5, 1, 0))
        #expect((stats.coalesced, stats.fetches, stats.decodes) == (2, 3, 2))  // fetches include the 404
        // A failed transfer's bytes are not counted.
        #expect(stats.bytesFetched == image.count + Fixtures.quadrants(width: 200, height: 100).count)
        #expect(stats.averageSourceBytes == Double(stats.bytesFetched) / 2)
        #expect((stats.memoryLookups, stats.memoryHits) == (6, 1))
        #expect(stats.memoryHitRate == 1.0 / 6)
        #expect(stats.oversizedSources == 4)  // every 1600x1200 result shown at 100x100; 200x100 is not
        #expect(stats.inFlight == 0 && stats.inFlightPeak >= 3)
        #expect(stats.averageDecodeMilliseconds > 0)
    }

    @Test("swift-metrics gets the same counts, per-stage timers and the in-flight gauge")
    func swiftMetrics() async throws {
        let stats = await (try runWorkload()).stats()
        for (name, field) in PipelineStats.counters {
            let total = metrics.counters(label: "pipelinehost_\(name)_total").reduce(0) { $0 + $1.totalValue }
            #expect(total == Int64(stats[keyPath: field]), "\(name)")
        }
        // Stage timers record stage runs that succeeded: two fetches (the 404 failed).
        #expect(try metrics.expectTimer("pipelinehost_stage_duration", [("stage", "fetch")]).values.count == 2)
        #expect(try metrics.expectTimer("pipelinehost_stage_duration", [("stage", "downsample")]).values.count == 2)
        #expect(try metrics.expectTimer("pipelinehost_request_duration").values.count == 6)
        let gauge = try metrics.expectGauge("pipelinehost_in_flight")
        #expect(gauge.values.max() == Double(stats.inFlightPeak))
    }

    @Test("the queue gauge follows steps into a lane's queue, out on a slot, and out on a cancel")
    func queueGauge() async throws {
        server.route("/slot.jpg", .held(gate: "slot", .ok(image, contentType: "image/jpeg")))
        var configuration = TestPipeline.configuration(cacheIn: directory)
        configuration.metrics = metrics
        configuration.transfers = 1
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(TestPipeline.thumbnail(size: 100, fetchTimeout: 120)),
            configuration: configuration)
        func request(_ path: String) -> Task<PipelineResult, any Error> {
            let request = ImageRequest(source: server.url(path), profile: "thumbnail")
            return Task { try await pipeline.image(for: request) }
        }
        let held = request("/slot.jpg")
        await pipeline.waitForActivity { $0.runningTransfers == 1 }
        let queued = request("/other.jpg")
        await pipeline.waitForActivity { $0.queuedTransfers == 1 }
        let leaving = request("/missing.jpg")
        await pipeline.waitForActivity { $0.queuedTransfers == 2 }
        leaving.cancel()
        await pipeline.waitForActivity { $0.queuedTransfers == 1 }
        server.open("slot")
        _ = try await (held.value, queued.value)
        let gauge = try metrics.expectGauge("pipelinehost_queued", [("lane", "transfers")])
        #expect(gauge.values == [1, 2, 1, 0], "queued, queued, cancelled, granted")
    }
}
