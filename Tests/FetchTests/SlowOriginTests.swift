import PipelineHost
import TestSupport
import Testing

/// Transfers wait on threads of their own, and one host takes at most its per-host share: 16
/// transfers held by two slow origins leave other hosts, and the disk cache, as they were.
@Suite(
    "slow origins do not starve other hosts or the disk cache", .hangLimit, .needs(.pixels, .network))
struct SlowOriginTests {
    @Test("with 16 transfers held on two hosts, a third host and a disk hit are answered while they hang")
    func heldTransfers() async throws {
        let slow = [try LoopbackServer(), try LoopbackServer()], fast = try LoopbackServer()
        for server in slow {
            server.route("/slow.jpg", .held(gate: "slow", .ok(Fixtures.sample, contentType: "image/jpeg")))
        }
        fast.route("/fast.jpg", .ok(Fixtures.quadrants(width: 64, height: 48), contentType: "image/jpeg"))
        fast.route("/stored.jpg", .ok(Fixtures.quadrants(width: 48, height: 64), contentType: "image/jpeg"))
        let directory = try TemporaryDirectory()
        let profile = """
            profile "p" { fetch { retries = 0, timeout = 120, low_speed_time = 120 }, cache { disk = true }, decode {}, downsample { size = 32 }, encode {} }
            """
        // Serve's defaults: 64 transfers, 8 to one host.
        let configuration = PipelineConfiguration(
            transfers: 64, transfersPerHost: 8,
            cache: CacheSettings(directory: directory.path))
        // The original of /stored.jpg on disk, from an earlier process.
        let earlier = Pipeline(profiles: try TestPipeline.load(profile), configuration: configuration)
        _ = try await earlier.image(for: ImageRequest(source: fast.url("/stored.jpg"), profile: "p"))
        await earlier.flushCache()

        let pipeline = Pipeline(profiles: try TestPipeline.load(profile), configuration: configuration)
        let held = slow.flatMap { server in
            (0..<8).map { index in
                Task {
                    try await pipeline.image(
                        for: ImageRequest(source: server.url("/slow.jpg?n=\(index)"), profile: "p"))
                }
            }
        }
        await pipeline.waitForActivity { $0.runningTransfers == 16 }
        let other = try await pipeline.image(for: ImageRequest(source: fast.url("/fast.jpg"), profile: "p"))
        let stored = try await pipeline.image(for: ImageRequest(source: fast.url("/stored.jpg"), profile: "p"))
        #expect(other.size == PixelSize(width: 32, height: 24))
        #expect(stored.size == PixelSize(width: 24, height: 32))
        #expect(fast.requestCount("/stored.jpg") == 1, "the second process read the original from disk")
        let activity = await pipeline.activity()
        #expect(
            activity.runningTransfers == 16 && activity.queuedTransfers == 0, "the slow ones still hang: \(activity)")
        #expect(slow.allSatisfy { $0.requestCount("/slow.jpg") == 8 })
        for server in slow { server.open("slow") }
        for task in held { _ = try await task.value }
    }
}
