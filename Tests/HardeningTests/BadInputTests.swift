import FetchPlugin
import PipelineHost
import PipelineHostTransfer
import TestSupport
import Testing

@Suite(
    "bad input: typed errors, nothing cached, the batch goes on", .needs(.pixels, .network),
    .loopbackOrigin)
struct BadInputTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let good = Fixtures.quadrants(width: 640, height: 480)

    init() throws {
        directory = try TemporaryDirectory()
        BadInputs.serve(on: server)
        server.route("/good.jpg", .ok(good, contentType: "image/jpeg"))
    }

    func request(_ path: String, salt: String, profile: String = "hardened") -> ImageRequest {
        ImageRequest(source: server.url(path + "?id=1&t=\(salt)&s=\(salt)"), profile: profile)
    }

    /// Runs every case and the good image at once through one pipeline.
    func batch(_ pipeline: Pipeline, salt: String) async -> [String: Result<PipelineResult, PipelineError>] {
        let paths = BadInputs.cases.map(\.path) + ["/good.jpg"]
        let requests =
            BadInputs.cases.map { request($0.path, salt: salt, profile: $0.profile) } + [
                request("/good.jpg", salt: salt)
            ]
        let outcomes = await TestPipeline.outcomes(requests, in: pipeline, window: paths.count)
        return Dictionary(uniqueKeysWithValues: zip(paths, outcomes))
    }

    @Test("every case gives its error kind; a good image in the same batch succeeds; no failure is cached")
    func corpus() async throws {
        let set = try TestPipeline.load(BadInputs.profile)
        let pipeline = Pipeline(profiles: set, configuration: TestPipeline.configuration(cacheIn: directory))

        for round in 1...2 {
            let outcomes = await batch(pipeline, salt: "salt\(round)")
            let result = try #require(try? outcomes["/good.jpg"]?.get())
            #expect(result.size == PixelSize(width: 64, height: 48))
            #expect(result.memoryHit == (round == 2))

            for input in BadInputs.cases {
                guard case .failure(let error) = outcomes[input.path] else {
                    Issue.record("\(input.name): expected an error, got \(String(describing: outcomes[input.path]))")
                    continue
                }
                #expect(error.kind == input.kind, "\(input.name): \(error)")
                #expect(error.reason.hasPrefix(input.reason), "\(input.name): \(error.reason)")
                // One line naming the source, with its secrets redacted.
                #expect(error.description == "\(server.url(input.path))?id=1&t=REDACTED&s=REDACTED: \(error.reason)")
                #expect(!error.description.contains("\n"))
                // Not cached: the second round asks the server again, as many times as the first.
                #expect(server.requestCount(input.path) == input.requests * round, "\(input.name)")
            }
            await pipeline.flushCache()
            // On disk: only the good image's original.
            #expect(DiskCache(directory: directory.path).report().entries == 1)
        }
        #expect(server.requestCount("/good.jpg") == 1)
        let stats = await pipeline.stats()
        #expect(stats.inFlight == 0)
        #expect(stats.failed == 2 * BadInputs.cases.count)
    }

    @Test("503 with Retry-After carries the server's delay")
    func retryAfter() async throws {
        let set = try TestPipeline.load(BadInputs.profile)
        let error = await #expect(throws: PipelineError.self) {
            try await Pipeline(profiles: set).image(for: request("/bad/busy.jpg", salt: "x"))
        }
        #expect(error?.httpStatus == 503 && error?.retryAfter == 1)
    }
}
