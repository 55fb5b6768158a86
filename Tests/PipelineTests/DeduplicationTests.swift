import PipelineHost
import TestSupport
import Testing

@Suite(
    "Pipeline: in-flight work is shared, counted at the server", .hangLimit, .needs(.pixels, .network),
    .loopbackOrigin)
struct DeduplicationTests {
    let server = LoopbackServer.fixture

    @Test("100 concurrent identical requests make 1 transfer and 1 decode")
    func hundredTwins() async throws {
        server.route("/cover.jpg", .held(gate: "twins", .ok(Fixtures.sample, contentType: "image/jpeg")))
        let pipeline = Pipeline(profiles: try TestPipeline.load(TestPipeline.thumbnail(fetchTimeout: 120)))
        let request = ImageRequest(source: server.url("/cover.jpg"), profile: "thumbnail")
        let results = try await withThrowingTaskGroup(of: PipelineResult.self) { group in
            for _ in 0..<100 { group.addTask { try await pipeline.image(for: request) } }
            // The transfer is held at the server until every request waits, so all of them
            // are in flight together however slow the machine is.
            await pipeline.waitForActivity { $0.waitingRequests == 100 }
            server.open("twins")
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(server.requestCount("/cover.jpg") == 1)
        let stats = await pipeline.stats()
        #expect((stats.requests, stats.succeeded, stats.fetches, stats.decodes) == (100, 100, 1, 1))
        #expect(stats.coalesced == 99)
        #expect(Set(results.map(\.bytes.array)).count == 1)
        #expect(results.filter(\.coalesced).count == 99)
        #expect(await pipeline.activity().work == 0)
    }

    @Test("URLs that differ only in their auth salt share one transfer")
    func saltedTwins() async throws {
        server.route("/rest/getCoverArt", .held(gate: "salted", .ok(Fixtures.sample, contentType: "image/jpeg")))
        let pipeline = Pipeline(profiles: try TestPipeline.example("examples/salted-urls.lua", fetchTimeout: 120))
        let requests = (1...10).map { n in
            ImageRequest(
                source: server.url("/rest/getCoverArt?id=al-7&u=me&t=token\(n)&s=salt\(n)&v=1.16.1&c=app"),
                profile: "thumbnail")
        }
        let results = try await withThrowingTaskGroup(of: PipelineResult.self) { group in
            for request in requests { group.addTask { try await pipeline.image(for: request) } }
            await pipeline.waitForActivity { $0.waitingRequests == 10 }
            server.open("salted")
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(server.requestCount("/rest/getCoverArt") == 1)
        #expect(Set(results.map(\.key)).count == 1)
        #expect(await pipeline.stats().fetches == 1)
    }

    @Test("two profiles on one URL share the transfer and the decode, and make different images")
    func twoProfiles() async throws {
        server.route("/rest/getCoverArt", .held(gate: "profiles", .ok(Fixtures.sample, contentType: "image/jpeg")))
        let pipeline = Pipeline(profiles: try TestPipeline.example("examples/salted-urls.lua", fetchTimeout: 120))
        let url = server.url("/rest/getCoverArt?id=al-9&s=abc&t=def")
        async let thumbnail = pipeline.image(for: ImageRequest(source: url, profile: "thumbnail"))
        async let background = pipeline.image(for: ImageRequest(source: url, profile: "blurred-background"))
        await pipeline.waitForActivity { $0.waitingRequests == 2 }
        server.open("profiles")
        let (small, blurred) = try await (thumbnail, background)
        #expect(server.requestCount("/rest/getCoverArt") == 1)
        #expect(small.size == PixelSize(width: 300, height: 300))
        #expect(blurred.size == PixelSize(width: 512, height: 341))
        let stats = await pipeline.stats()
        #expect((stats.fetches, stats.decodes, stats.coalesced) == (1, 1, 1))
        #expect(small.coalesced != blurred.coalesced)
    }

    @Test("a per-request size override changes the key and the size, and still shares the transfer")
    func overrides() async throws {
        server.route("/a.jpg", .held(gate: "override", .ok(Fixtures.sample, contentType: "image/jpeg")))
        let pipeline = Pipeline(profiles: try TestPipeline.load(TestPipeline.thumbnail(fetchTimeout: 120)))
        let url = server.url("/a.jpg")
        async let normal = pipeline.image(for: ImageRequest(source: url, profile: "thumbnail"))
        async let tiny = pipeline.image(
            for: ImageRequest(
                source: url, profile: "thumbnail",
                overrides: ["downsample": ["size": .integer(64)]]))
        await pipeline.waitForActivity { $0.waitingRequests == 2 }
        server.open("override")
        let (big, small) = try await (normal, tiny)
        #expect(big.size == PixelSize(width: 300, height: 300))
        #expect(small.size == PixelSize(width: 64, height: 64))
        #expect(big.key != small.key && small.key.contains("size=64"))
        #expect(server.requestCount("/a.jpg") == 1)
    }

    @Test("an override is checked like a profile parameter")
    func badOverride() async throws {
        let pipeline = Pipeline(profiles: try TestPipeline.load(TestPipeline.thumbnail(fetchTimeout: 120)))
        let request = ImageRequest(
            source: server.url("/a.jpg"), profile: "thumbnail",
            overrides: ["downsample": ["sise": .integer(64)]])
        let error = await #expect(throws: PipelineError.self) { try await pipeline.image(for: request) }
        #expect(error?.kind == .profile)
        #expect(error?.reason == "override: downsample: unknown parameter 'sise' (did you mean 'size'?)")
        #expect(server.requestCount("/a.jpg") == 0)
    }

    @Test("a failure reaches every waiter, names each one's own source, and is not kept")
    func sharedFailure() async throws {
        server.route("/gone.jpg", .held(gate: "gone", .status(404)))
        let pipeline = Pipeline(profiles: try TestPipeline.load(TestPipeline.thumbnail(fetchTimeout: 120)))
        let first = ImageRequest(source: server.url("/gone.jpg?s=one"), profile: "thumbnail")
        let second = ImageRequest(source: server.url("/gone.jpg?s=two"), profile: "thumbnail")
        async let a = Result(catching: { () async throws(PipelineError) in try await pipeline.image(for: first) })
        async let b = Result(catching: { () async throws(PipelineError) in try await pipeline.image(for: second) })
        await pipeline.waitForActivity { $0.waitingRequests == 2 }
        server.open("gone")
        let errors = await [a, b].compactMap { if case .failure(let e) = $0 { e } else { nil } }
        #expect(
            errors.map(\.description) == [
                server.url("/gone.jpg?s=REDACTED") + ": HTTP 404",
                server.url("/gone.jpg?s=REDACTED") + ": HTTP 404",
            ])
        #expect(server.requestCount("/gone.jpg") == 1)
        // Errors are never kept: the next request asks the server again.
        _ = try? await pipeline.image(for: first)
        #expect(server.requestCount("/gone.jpg") == 2)
        #expect(await pipeline.activity().work == 0)
    }
}

extension Result where Failure == PipelineError {
    /// The outcome of a throwing async call, as a value.
    init(catching body: () async throws(PipelineError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
