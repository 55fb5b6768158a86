import Foundation
import PipelineHost
import TestSupport
import Testing

/// A second profile of one source that arrives after the first one's original was fetched, but
/// before that request succeeded and stored it, joins the fetched original instead of fetching
/// again (CI once saw examples/subsonic.lua transfer twice this way).
@Suite(
    "A finished original waiting for its store stays joinable until its request ends", .needs(.pixels, .network),
    .loopbackOrigin)
struct AwaitingCommitTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let gates = HoldGates()

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/cover.jpg", .ok(Fixtures.quadrants(width: 400, height: 300), contentType: "image/jpeg"))
    }

    func pipeline(gate: String) throws -> Pipeline {
        let prefix = #"fetch { retry_delay = 0.01 }, cache { disk = true }, decode {}"#
        let lua = """
            profile "held" { \(prefix), hold { gate = "\(gate)" }, encode {} }
            profile "plain" { \(prefix), downsample { size = 32 }, encode {} }
            """
        return Pipeline(
            profiles: try TestPipeline.load(lua, gates: gates),
            configuration: TestPipeline.configuration(cacheIn: directory))
    }

    /// A pipeline whose first request has fetched the original and now waits at its gate, so
    /// the original's store waits for that request.
    func heldAfterFetch() async throws -> (Pipeline, Task<PipelineResult, any Error>, String) {
        let gate = "held"
        let pipeline = try pipeline(gate: gate)
        let url = server.url("/cover.jpg")
        let first = Task { try await pipeline.image(for: ImageRequest(source: url, profile: "held")) }
        await gates.waitUntilEntered(gate)
        return (pipeline, first, gate)
    }

    @Test("a late second profile joins the original the first one fetched")
    func lateJoin() async throws {
        let (pipeline, first, gate) = try await heldAfterFetch()
        let url = server.url("/cover.jpg")
        let second = try await pipeline.image(for: ImageRequest(source: url, profile: "plain"))
        #expect(second.coalesced)
        gates.open(gate)
        _ = try await first.value
        #expect(server.requestCount("/cover.jpg") == 1)
        await pipeline.flushCache()
        #expect(DiskCache(directory: directory.path).report().originals == 1)
    }

    @Test("when the first request is cancelled instead, the held original is dropped")
    func dropped() async throws {
        let (pipeline, first, gate) = try await heldAfterFetch()
        let url = server.url("/cover.jpg")
        first.cancel()
        await #expect(throws: PipelineError.self) { try await first.value }
        _ = try await pipeline.image(for: ImageRequest(source: url, profile: "plain"))
        #expect(server.requestCount("/cover.jpg") == 2, "nothing of the cancelled request was kept")
        gates.open(gate)
    }
}
