import FetchPlugin
import PipelineHost
import PipelineHostTransfer
import TestSupport
import Testing

@Suite("fetch over libcurl", .serialized, .needs(.pixels, .network), .loopbackOrigin)
struct FetchTests {
    let server = LoopbackServer.fixture
    let jpeg = Fixtures.quadrants(width: 64, height: 48)

    init() throws {
        server.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
    }

    @Test("an http body arrives byte for byte")
    func body() async throws {
        let result = try await TestPipeline.run(fetchOnly(), source: server.url("/photo.jpg"))
        #expect(firstDifference(result.bytes, jpeg) == nil)
        #expect(server.requestCount("/photo.jpg") == 1)
    }

    @Test("connections are reused across requests")
    func reuse() async throws {
        let set = try TestPipeline.load(fetchOnly())
        let pipeline = Pipeline(profiles: set)
        for _ in 0..<3 {
            _ = try await pipeline.image(for: ImageRequest(source: server.url("/photo.jpg"), profile: "raw"))
        }
        #expect(server.requestCount("/photo.jpg") == 3)
        #expect(server.connectionCount == 1)
    }

    @Test("a non-2xx status is an error that carries the status", arguments: [404, 500, 503])
    func status(_ code: Int) async throws {
        server.route("/gone", .status(code))
        let error = try await TestPipeline.failure(
            fetchOnly("retry_delay = 0.01"), source: server.url("/gone?t=secret"))
        #expect(error?.kind == .httpStatus)
        #expect(error?.httpStatus == code)
        let attempts = code >= 500 ? " (after 3 attempts)" : ""
        #expect(error?.description == "\(server.url("/gone?t=REDACTED")): HTTP \(code)\(attempts)")
    }

    @Test("redirects are followed, up to max_redirects")
    func redirects() async throws {
        server.route("/moved", .redirect(to: "/photo.jpg"))
        let result = try await TestPipeline.run(fetchOnly(), source: server.url("/moved"))
        #expect(firstDifference(result.bytes, jpeg) == nil)

        server.route("/loop", .redirect(to: "/loop"))
        let error = try await TestPipeline.failure(fetchOnly("max_redirects = 3"), source: server.url("/loop"))
        #expect(error?.kind == .transport)
        #expect(error?.reason == "too many redirects (more than 3)")
        #expect(server.requestCount("/loop") == 4)
    }

    @Test("a redirect to file:// is refused")
    func redirectToFile() async throws {
        server.route("/sneaky", .redirect(to: "file:///etc/passwd"))
        let error = try await TestPipeline.failure(fetchOnly(), source: server.url("/sneaky"))
        #expect(error?.kind == .invalidSource)
    }

    @Test("a slow server hits the timeout")
    func timeout() async throws {
        server.route("/slow", .held(gate: "never", .ok(jpeg)))
        let error = try await TestPipeline.failure(fetchOnly("timeout = 0.3"), source: server.url("/slow"))
        #expect(error?.kind == .timeout)
    }

    @Test("a body over max_bytes stops the transfer", arguments: [false, true])
    func tooLarge(dripped: Bool) async throws {
        let big = [UInt8](repeating: 7, count: 200_000)
        // Dripped, the size is not known up front and the write callback has to stop it.
        server.route("/big", dripped ? .drip(big, chunk: 50_000, pause: 0.01) : .ok(big))
        let error = try await TestPipeline.failure(fetchOnly("max_bytes = 100000"), source: server.url("/big"))
        #expect(error?.kind == .tooLarge)
        #expect(error?.reason == "body larger than max_bytes (100000 bytes)")
    }

    @Test("a body cut short is a transport error")
    func truncated() async throws {
        server.route("/cut", .truncated(Array(jpeg.prefix(100)), missing: 500))
        let error = try await TestPipeline.failure(fetchOnly("retries = 0"), source: server.url("/cut"))
        #expect(error?.kind == .transport)
        #expect(server.requestCount("/cut") == 1)
    }

    @Test("a refused connection is a transport error")
    func refused() async throws {
        let closed = try LoopbackServer()
        let url = closed.url("/x.jpg")
        closed.stop()
        let error = try await TestPipeline.failure(fetchOnly("connect_timeout = 2, retry_delay = 0.01"), source: url)
        #expect(error?.kind == .transport)
    }

    @Test("file:// URLs and plain paths are read")
    func files() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("a photo.jpg", jpeg)
        #expect(firstDifference(try await TestPipeline.run(fetchOnly(), source: path).bytes, jpeg) == nil)
        let byURL = try await TestPipeline.run(
            fetchOnly(), source: "file://" + path.replacingOccurrences(of: " ", with: "%20"))
        #expect(firstDifference(byURL.bytes, jpeg) == nil)
        let missing = try await TestPipeline.failure(fetchOnly(), source: directory.file("nope.jpg"))
        #expect(missing?.kind == .invalidSource)
    }

    @Test("other schemes are refused before any transfer")
    func scheme() async throws {
        let error = try await TestPipeline.failure(fetchOnly(), source: "ftp://example.com/a.jpg")
        #expect(error?.kind == .invalidSource)
        #expect(error?.reason == "unsupported scheme 'ftp' (use http, https, file, s3 or a path)")
    }

    @Test("cancelling the waiting task aborts the transfer")
    func cancel() async throws {
        server.route("/drip", .stalled([UInt8](repeating: 1, count: 100), gate: "never", sent: 10))
        // Ten minutes for the transfer and for a stall: only the cancellation ends it.
        let set = try TestPipeline.load(fetchOnly("timeout = 600, low_speed_time = 600"))
        let pipeline = Pipeline(profiles: set)
        let task = Task { try await pipeline.image(for: ImageRequest(source: server.url("/drip"), profile: "raw")) }
        // The transfer is under way (and never ends by itself); then the only waiter leaves.
        #expect(await eventually { server.requestCount("/drip") == 1 })
        task.cancel()
        let outcome = await task.result
        guard case .failure(let error as PipelineError) = outcome else {
            Issue.record("expected a cancellation, got \(outcome)")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(await eventually { server.abortedCount("/drip") == 1 }, "the transfer was cut off, not left to finish")
    }
}
