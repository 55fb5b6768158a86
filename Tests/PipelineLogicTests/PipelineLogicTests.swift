import Foundation
import PipelineHost
import PipelineProfiles
import PipelineTesting
import Testing

/// The pipeline's own rules (sharing, cancellation, priorities, cache order) with fake fetch,
/// decode and encode stages: no libcurl, no libvips, no sockets. Each test takes milliseconds
/// alone; its limit is TestSupport's `.hangLimit` (this target links no TestSupport), which says
/// why it is minutes.
@Suite("Pipeline logic with fake stages", .timeLimit(.minutes(15)))
struct PipelineLogicTests {
    let origin = FakeOrigin()

    func pipeline(_ lua: String, transfers: Int = 8, cpu: Int = 2, cache: CacheSettings = CacheSettings()) throws
        -> Pipeline
    {
        let profiles = try ProfileLoader(registry: FakeStages.registry(origin: origin)).load(
            code: Array(lua.utf8), name: "logic.lua")
        return Pipeline(
            profiles: profiles,
            configuration: PipelineConfiguration(
                transfers: transfers, transfersPerHost: transfers, cpuStages: cpu, cache: cache))
    }

    static let plain = #"profile "p" { fetch {}, decode {}, encode {} }"#

    @Test("twenty identical requests make one fetch; all but one are shared")
    func sharing() async throws {
        origin.serve("/a.jpg")
        origin.hold("/a.jpg")
        let pipeline = try pipeline(Self.plain)
        let requests = (0..<20).map { _ in
            Task { try await pipeline.image(for: ImageRequest(source: "fake://h/a.jpg", profile: "p")) }
        }
        await pipeline.waitForActivity { $0.waitingRequests == 20 }
        origin.release("/a.jpg")
        var shared = 0
        for request in requests where try await request.value.coalesced { shared += 1 }
        #expect(origin.started("/a.jpg") == 1)
        #expect(shared == 19)
        #expect(await pipeline.stats().inFlight == 0)
    }

    @Test("one waiter leaving keeps the work for the other; the last one leaving cancels the fetch")
    func cancellation() async throws {
        origin.serve("/b.jpg")
        origin.hold("/b.jpg")
        let pipeline = try pipeline(Self.plain)
        let first = Task { try await pipeline.image(for: ImageRequest(source: "fake://h/b.jpg", profile: "p")) }
        let second = Task { try await pipeline.image(for: ImageRequest(source: "fake://h/b.jpg", profile: "p")) }
        await pipeline.waitForActivity { $0.waitingRequests == 2 }
        await origin.wait(for: "/b.jpg") { $0.started == 1 }
        first.cancel()
        await #expect(throws: PipelineError.self) { try await first.value }
        #expect(origin.cancelled("/b.jpg") == 0, "the other waiter still wants it")
        second.cancel()
        await #expect(throws: PipelineError.self) { try await second.value }
        await origin.wait(for: "/b.jpg") { $0.cancelled == 1 }
        #expect(await pipeline.stats().inFlight == 0)
        origin.release("/b.jpg")
        _ = try await pipeline.image(for: ImageRequest(source: "fake://h/b.jpg", profile: "p"))
        #expect(origin.started("/b.jpg") == 2, "nothing of the cancelled work was kept")
    }

    @Test("with one transfer slot, a high-priority request overtakes queued low ones")
    func priorities() async throws {
        for path in ["/busy", "/low1", "/low2", "/high"] { origin.serve(path) }
        origin.hold("/busy")
        let pipeline = try pipeline(Self.plain, transfers: 1)
        let busy = Task { try await pipeline.image(for: ImageRequest(source: "fake://h/busy", profile: "p")) }
        await origin.wait(for: "/busy") { $0.started == 1 }
        var queued: [Task<PipelineResult, any Error>] = []
        for (path, priority) in [("/low1", Priority.low), ("/low2", .low), ("/high", .high)] {
            queued.append(
                Task {
                    try await pipeline.image(
                        for: ImageRequest(source: "fake://h" + path, profile: "p"), priority: priority)
                })
            let count = queued.count
            await pipeline.waitForActivity { $0.queuedTransfers == count }
        }
        origin.release("/busy")
        _ = try await busy.value
        for task in queued { _ = try await task.value }
        #expect(origin.order == ["/busy", "/high", "/low1", "/low2"])
    }

    @Test("a cache stage answers from memory the second time: no fetch, no decode")
    func memoryFirst() async throws {
        origin.serve("/c.jpg")
        let pipeline = try pipeline(#"profile "p" { fetch {}, decode {}, encode {}, cache { memory = true } }"#)
        let made = try await pipeline.image(for: ImageRequest(source: "fake://h/c.jpg", profile: "p"))
        let again = try await pipeline.image(for: ImageRequest(source: "fake://h/c.jpg", profile: "p"))
        #expect(!made.memoryHit && again.memoryHit)
        #expect(again.bytes.array == made.bytes.array)
        #expect(origin.started("/c.jpg") == 1)
    }

    @Test("a new pipeline finds the original on disk: no fetch")
    func diskNext() async throws {
        origin.serve("/d.jpg")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("logic-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lua = #"profile "p" { fetch {}, cache { disk = true }, decode {}, encode {} }"#
        let first = try pipeline(lua, cache: CacheSettings(directory: directory))
        _ = try await first.image(for: ImageRequest(source: "fake://h/d.jpg", profile: "p"))
        await first.flushCache()
        let second = try pipeline(lua, cache: CacheSettings(directory: directory))
        let served = try await second.image(for: ImageRequest(source: "fake://h/d.jpg", profile: "p"))
        #expect(served.diskHit)
        #expect(origin.started("/d.jpg") == 1)
    }

    @Test("a failure is shared by its waiters and never cached")
    func failures() async throws {
        origin.fail("/e.jpg", with: PipelineError(.httpStatus, "HTTP 404"))
        let pipeline = try pipeline(#"profile "p" { fetch {}, decode {}, encode {}, cache { memory = true } }"#)
        for _ in 0..<2 {
            await #expect(throws: PipelineError.self) {
                try await pipeline.image(for: ImageRequest(source: "fake://h/e.jpg", profile: "p"))
            }
        }
        #expect(origin.started("/e.jpg") == 2, "the second request asked again")
    }
}
