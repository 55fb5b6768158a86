import PipelineHost
import TestSupport
import Testing

@Suite(
    "Pipeline: queues serve higher priority first", .hangLimit, .needs(.pixels, .network),
    .loopbackOrigin)
struct PriorityTests {
    let server = LoopbackServer.fixture
    let pipeline: Pipeline

    init() throws {
        server.route("/block.jpg", .held(gate: "block", .ok(Fixtures.sample, contentType: "image/jpeg")))
        for path in ["/low-1.jpg", "/low-2.jpg", "/high.jpg"] {
            server.route(path, .ok(Fixtures.quadrants(width: 64, height: 64)))
        }
        // One transfer at a time, so every other request queues behind the held one, which only
        // the test opens: with 5 s to time out, two busy loops and the cluster suites' processes
        // could starve the set-up past it, and the queue then never formed.
        pipeline = Pipeline(
            profiles: try TestPipeline.load(TestPipeline.thumbnail(size: 32, fetchTimeout: 120)),
            configuration: PipelineConfiguration(transfers: 1))
    }

    private func request(_ path: String, _ priority: Priority) -> Task<PipelineResult, any Error> {
        let request = ImageRequest(source: server.url(path), profile: "thumbnail")
        return Task { [pipeline] in try await pipeline.image(for: request, priority: priority) }
    }

    /// Starts the held request, then each of `queued` in turn, each one in the queue before
    /// the next starts, so the arrival order is known.
    private func queueBehindHeld(_ queued: [(path: String, priority: Priority)]) async -> [Task<
        PipelineResult, any Error
    >] {
        var tasks = [request("/block.jpg", .normal)]
        await pipeline.waitForActivity { $0.runningTransfers == 1 }
        for (index, item) in queued.enumerated() {
            tasks.append(request(item.path, item.priority))
            await pipeline.waitForActivity { $0.queuedTransfers == index + 1 }
        }
        return tasks
    }

    private func release(_ tasks: [Task<PipelineResult, any Error>]) async throws {
        server.open("block")
        for task in tasks { _ = try await task.value }
    }

    @Test("a high-priority request queued behind low-priority work starts first")
    func highFirst() async throws {
        let tasks = await queueBehindHeld([("/low-1.jpg", .low), ("/low-2.jpg", .low), ("/high.jpg", .high)])
        try await release(tasks)
        #expect(server.requestLog == ["/block.jpg", "/high.jpg", "/low-1.jpg", "/low-2.jpg"])
    }

    @Test("a high-priority request that joins queued low-priority work raises it")
    func joiningRaises() async throws {
        var tasks = await queueBehindHeld([("/low-1.jpg", .low), ("/low-2.jpg", .low)])
        // Joins the queued transfer of low-2 rather than queueing a third.
        tasks.append(request("/low-2.jpg", .high))
        await pipeline.waitForActivity { $0.waitingRequests == 4 }
        #expect(await pipeline.activity().queuedTransfers == 2)
        try await release(tasks)
        #expect(server.requestLog == ["/block.jpg", "/low-2.jpg", "/low-1.jpg"])
    }

    @Test("a high-priority request that leaves queued work lowers it again")
    func leavingLowers() async throws {
        let tasks = await queueBehindHeld([("/low-1.jpg", .normal), ("/low-2.jpg", .low)])
        // Raises the queued transfer of low-2 above low-1, then leaves it.
        let high = request("/low-2.jpg", .high)
        await pipeline.waitForActivity { $0.waitingRequests == 4 }
        high.cancel()
        await pipeline.waitForActivity { $0.waitingRequests == 3 }
        #expect(await pipeline.activity().queuedTransfers == 2)
        try await release(tasks)
        #expect(server.requestLog == ["/block.jpg", "/low-1.jpg", "/low-2.jpg"])
    }

    @Test("within a priority, first come first served")
    func fifo() async throws {
        let tasks = await queueBehindHeld([("/low-2.jpg", .normal), ("/high.jpg", .normal), ("/low-1.jpg", .normal)])
        try await release(tasks)
        #expect(server.requestLog == ["/block.jpg", "/low-2.jpg", "/high.jpg", "/low-1.jpg"])
    }
}
