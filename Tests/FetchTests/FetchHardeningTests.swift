import Foundation
import PipelineHost
import TestSupport
import Testing

@Suite(
    "fetch hardening: connection pools per guard, bounded headers", .needs(.pixels, .network, .process),
    .loopbackOrigin)
struct FetchHardeningTests {
    let server = LoopbackServer.fixture
    let jpeg = Fixtures.quadrants(width: 64, height: 48)

    init() throws {
        // An HTTP/1.1 keep-alive server: a connection stays open for the next request, which is
        // what a pool shared between guard settings would hand to the wrong profile.
        server.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
    }

    @Test("a connection opened with allow_loopback never carries a strict block_private transfer")
    func poolPerGuard() async throws {
        let set = try TestPipeline.load(
            """
            profile "loop" { fetch { block_private = true, allow_loopback = true } }
            profile "strict" { fetch { block_private = true } }
            """)
        let pipeline = Pipeline(profiles: set)
        let url = server.url("/photo.jpg")
        let refusedFirst = await failure(pipeline, url, "strict")
        #expect(refusedFirst?.kind == .blocked)
        for _ in 0..<3 {
            _ = try await pipeline.image(for: ImageRequest(source: url + "?n=\(UUID())", profile: "loop"))
            let refused = await failure(pipeline, url + "?n=\(UUID())", "strict")
            #expect(refused?.kind == .blocked, "\(String(describing: refused))")
        }
        #expect(server.requestCount("/photo.jpg") == 3)
        #expect(server.connectionCount == 1, "the loop profile's connection is kept alive and reused by loop alone")
    }

    @Test("--profile strict --profile loop --jobs 1: every strict request is refused")
    func poolPerGuardCLI() async throws {
        let directory = try TemporaryDirectory()
        let profile = try directory.write(
            "guards.lua",
            Array(
                """
                profile "loop" { fetch { block_private = true, allow_loopback = true }, decode {}, encode {} }
                profile "strict" { fetch { block_private = true }, decode {}, encode {} }
                """.utf8))
        let sources = (0..<4).map { server.url("/photo.jpg?n=\($0)") }
        let run = try await CLIProcess.run(
            [
                "run", profile, "--profile", "strict", "--profile", "loop", "--jobs", "1",
                "--no-cache", "--json", "--output-dir", directory.path,
            ] + sources)
        let lines = run.stdout.split(separator: "\n")
        #expect(run.status == 1)
        #expect(lines.count == 8)
        #expect(lines.filter { $0.contains(#""kind":"blocked""#) }.count == 4, "\(run.stdout)")
        #expect(lines.filter { $0.contains(#""type":"result""#) && $0.contains(#""profile":"loop""#) }.count == 4)
        #expect(server.requestCount("/photo.jpg") == 4)
    }

    @Test("12,000 repeated headers stop at max_header_bytes, inside the transfer")
    func headerFlood() async throws {
        server.route(
            "/flood",
            .repeatedHeader(
                name: "ETag", value: "\"0123456789abcdef\"", count: 12_000,
                .ok(jpeg, contentType: "image/jpeg")))
        let error = try await TestPipeline.failure(fetchOnly("timeout = 1, retries = 0"), source: server.url("/flood"))
        #expect(error?.kind == .tooLarge)
        #expect(error?.reason == "response headers larger than max_header_bytes (131072 bytes)")
    }

    /// libcurl refuses a header line over 100 KB, and a header block over 300 KB, before our
    /// callback sees them: still too large, and not retried like a dropped connection.
    @Test(
        "headers past libcurl's own limits are too_large, and tried once",
        arguments: [
            ("one line of 120 KB", 1, 120_000), ("400 lines of 1 KB", 400, 1_000),
        ])
    func curlHeaderLimits(_ shape: String, _ count: Int, _ size: Int) async throws {
        let path = "/big-\(count)"
        server.route(
            path,
            .repeatedHeader(
                name: "X-Filler", value: String(repeating: "a", count: size), count: count,
                .ok(jpeg, contentType: "image/jpeg")))
        let error = try await TestPipeline.failure(
            fetchOnly("max_header_bytes = 16000000, retries = 2, retry_delay = 0"),
            source: server.url(path))
        #expect(error?.kind == .tooLarge, "\(shape): \(String(describing: error))")
        #expect(server.requestCount(path) == 1, "\(shape)")
    }

    @Test("repeated headers under the limit are joined, each read once")
    func repeatedHeaders() async throws {
        server.route(
            "/many",
            .repeatedHeader(
                name: "Cache-Control", value: "public", count: 2_000,
                .ok(jpeg, contentType: "image/jpeg")))
        let image = try await fetch(server.url("/many"), parameters: "max_header_bytes = 1000000")
        #expect(image.bytes.count == jpeg.count)
        #expect(image.cacheHints?.cacheControl?.split(separator: ",").count == 2_000)
    }

    @Test("the headers of a redirect do not count for the final response")
    func redirectHeaders() async throws {
        server.route("/hop", .headers(["ETag": "\"old\""], .redirect(to: "/tagged")))
        server.route("/tagged", .headers(["ETag": "\"new\""], .ok(jpeg, contentType: "image/jpeg")))
        let image = try await fetch(server.url("/hop"))
        #expect(image.cacheHints?.validators.etag == "\"new\"")
    }

    private func failure(_ pipeline: Pipeline, _ source: String, _ profile: String) async -> PipelineError? {
        do {
            _ = try await pipeline.image(for: ImageRequest(source: source, profile: profile))
            return nil
        } catch {
            return error
        }
    }

    /// Runs the fetch stage alone and returns what it made.
    private func fetch(_ url: String, parameters: String = "") async throws -> EncodedImage {
        let stage = try TestPipeline.load(fetchOnly(parameters))["raw"]!.stages[0]
        let context = StageContext(source: url, logger: .init(label: "test"))
        let value = try await stage.stage.run(.source(Source(location: url)), in: context)
        guard case .encoded(let image) = value else { throw PipelineError(.stageFailed, "fetch gave \(value)") }
        return image
    }
}
