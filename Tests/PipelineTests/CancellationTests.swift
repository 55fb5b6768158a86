import PipelineHost
import TestSupport
import Testing

@Suite(
    "Pipeline: cancellation is counted per waiter", .hangLimit, .needs(.pixels, .network),
    .loopbackOrigin)
struct CancellationTests {
    let server = LoopbackServer.fixture
    let profile = TestPipeline.thumbnail(fetchTimeout: 120)

    init() throws {
        server.route("/cover.jpg", .ok(Fixtures.sample, contentType: "image/jpeg"))
    }

    @Test("cancelling one of two waiters lets the other finish with the right bytes")
    func cancelOne() async throws {
        // Mid-transfer until the test opens the gate, after the first waiter has left.
        server.route("/slow.jpg", .stalled(Fixtures.sample, gate: "one-left", sent: 4096))
        let pipeline = Pipeline(profiles: try TestPipeline.load(profile))
        let request = ImageRequest(source: server.url("/slow.jpg"), profile: "thumbnail")
        let leaving = Task { try await pipeline.image(for: request) }
        let staying = Task { try await pipeline.image(for: request) }
        await pipeline.waitForActivity { $0.waitingRequests == 2 && $0.runningTransfers == 1 }
        #expect(await eventually { server.requestCount("/slow.jpg") == 1 })
        leaving.cancel()
        let left = await leaving.result
        #expect(throws: PipelineError.self) { try left.get() }
        await pipeline.waitForActivity { $0.waitingRequests == 1 && $0.runningTransfers == 1 }
        server.open("one-left")
        let result = try await staying.value
        let reference = try await TestPipeline.run(profile, source: server.url("/cover.jpg"))
        #expect(firstDifference(result.bytes, reference.bytes) == nil)
        #expect(server.requestCount("/slow.jpg") == 1)
        #expect(server.abortedCount("/slow.jpg") == 0)
        let stats = await pipeline.stats()
        #expect((stats.succeeded, stats.cancelled, stats.fetches) == (1, 1, 1))
        #expect(await eventually { await pipeline.activity().work == 0 })
    }

    @Test("cancelling every waiter aborts the transfer, empties the in-flight table and keeps nothing")
    func cancelAll() async throws {
        // Mid-transfer and never ending: only the cancellation stops it.
        server.route("/slow.jpg", .stalled(Fixtures.sample, gate: "never", sent: 512))
        let pipeline = Pipeline(profiles: try TestPipeline.load(profile))
        let request = ImageRequest(source: server.url("/slow.jpg"), profile: "thumbnail")
        let first = Task { try await pipeline.image(for: request) }
        let second = Task { try await pipeline.image(for: request) }
        await pipeline.waitForActivity { $0.waitingRequests == 2 && $0.runningTransfers == 1 }
        #expect(await eventually { server.requestCount("/slow.jpg") == 1 })
        first.cancel()
        second.cancel()
        for task in [first, second] {
            let error = await #expect(throws: PipelineError.self) { try await task.value }
            #expect(error?.kind == .cancelled)
        }
        // The server sees the client go away while it holds the rest of the body.
        #expect(await eventually { server.abortedCount("/slow.jpg") == 1 })
        await pipeline.waitForActivity { $0.isIdle }
        let stats = await pipeline.stats()
        #expect((stats.cancelled, stats.failed, stats.fetches, stats.bytesFetched) == (2, 0, 1, 0))
        // Nothing partial was kept: the next request transfers afresh.
        server.route("/slow.jpg", .ok(Fixtures.sample, contentType: "image/jpeg"))
        let again = try await pipeline.image(for: request)
        #expect(again.size == PixelSize(width: 300, height: 300))
        #expect(server.requestCount("/slow.jpg") == 2)
    }

    @Test("queued CPU work whose waiters are gone never runs")
    func queuedWorkIsSkipped() async throws {
        let lua = """
            profile "held" {
              fetch {}, decode {}, hold { gate = "cpu-busy" }, encode {},
            }
            """
        let gates = HoldGates()
        let profiles = try TestPipeline.load(lua, gates: gates)
        let pipeline = Pipeline(profiles: profiles, configuration: PipelineConfiguration(cpuStages: 1))
        server.route("/other.jpg", .ok(Fixtures.sample, contentType: "image/jpeg"))
        // The first request takes the only CPU slot and keeps it at the hold stage.
        let busy = Task {
            try await pipeline.image(for: ImageRequest(source: server.url("/cover.jpg"), profile: "held"))
        }
        await gates.waitUntilEntered("cpu-busy")
        // The second is fetched, then queues for the CPU slot to decode.
        let queued = Task {
            try await pipeline.image(for: ImageRequest(source: server.url("/other.jpg"), profile: "held"))
        }
        await pipeline.waitForActivity { $0.queuedCPU == 1 }
        queued.cancel()
        await pipeline.waitForActivity { $0.queuedCPU == 0 }
        gates.open("cpu-busy")
        _ = try await busy.value
        let skipped = await queued.result
        #expect(throws: PipelineError.self) { try skipped.get() }
        let stats = await pipeline.stats()
        #expect((stats.fetches, stats.decodes, stats.succeeded, stats.cancelled) == (2, 1, 1, 1))
        #expect(gates.enteredCount("cpu-busy") == 1)
        // Cancelled work leaves in tasks of its own: wait for the event, not a moment.
        #expect(await eventually { await pipeline.activity().isIdle })
    }

    @Test("a cancelled prefetch leaves nothing running")
    func cancelPrefetch() async throws {
        server.route("/block.jpg", .held(gate: "prefetch-block", .ok(Fixtures.sample, contentType: "image/jpeg")))
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(profile), configuration: PipelineConfiguration(transfers: 1))
        let blocker = Task {
            try await pipeline.image(for: ImageRequest(source: server.url("/block.jpg"), profile: "thumbnail"))
        }
        await pipeline.waitForActivity { $0.runningTransfers == 1 }
        let prefetch = pipeline.prefetch(
            ["/p1.jpg", "/p2.jpg"].map { ImageRequest(source: server.url($0), profile: "thumbnail") })
        await pipeline.waitForActivity { $0.queuedTransfers == 2 }
        prefetch.cancel()
        #expect(await prefetch.wait() == 0)
        server.open("prefetch-block")
        _ = try await blocker.value
        // Cancelled work leaves in tasks of its own: wait for the event, not a moment.
        #expect(await eventually { await pipeline.activity().isIdle })
        #expect(server.requestCount("/p1.jpg") == 0 && server.requestCount("/p2.jpg") == 0)
    }
}
