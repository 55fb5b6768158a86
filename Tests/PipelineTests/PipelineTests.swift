import PipelineHost
import TestSupport
import Testing

@Suite("Pipeline: profiles end to end over loopback HTTP", .needs(.pixels, .network), .loopbackOrigin)
struct PipelineTests {
    let server = LoopbackServer.fixture

    init() throws {
        server.route("/rest/getCoverArt", .ok(Fixtures.sample, contentType: "image/jpeg"))
    }

    @Test("the thumbnail example makes a 300x300 JPEG from an HTTP source")
    func thumbnail() async throws {
        let set = try ProfileLoader(registry: TestPipeline.registry()).load(
            file: Fixtures.path("examples/thumbnail.lua"))
        let cache = try TemporaryDirectory()
        let pipeline = Pipeline(profiles: set, configuration: TestPipeline.configuration(cacheIn: cache))
        let result = try await pipeline.image(
            for: ImageRequest(source: server.url("/rest/getCoverArt?id=1"), profile: "thumbnail"))
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.format, info.width, info.height) == ("jpeg", 300, 300))
        #expect(
            result.timings.map(\.stage) == ["normalize", "fetch", "cache", "decode", "downsample", "encode", "cache"])
    }

    @Test("salted URLs of one image have one key, and the salt is never shown")
    func stableKey() async throws {
        let set = try ProfileLoader(registry: TestPipeline.registry()).load(
            file: Fixtures.path("examples/salted-urls.lua"))
        let pipeline = Pipeline(profiles: set)
        let first = try await pipeline.image(
            for: ImageRequest(
                source: server.url("/rest/getCoverArt?id=al-1&u=me&t=0a1b2c&s=salt1&v=1.16.1&c=app"),
                profile: "thumbnail"))
        let second = try await pipeline.image(
            for: ImageRequest(
                source: server.url("/rest/getCoverArt?c=app&s=salt2&t=3d4e5f&u=me&v=1.16.1&id=al-1"),
                profile: "thumbnail"))
        #expect(first.sourceKey == server.url("/rest/getCoverArt?id=al-1"))
        #expect(first.key == second.key)
        #expect(first.key.contains("downsample@1("))
        #expect(!first.source.contains("0a1b2c") && !first.source.contains("salt1"))
        #expect(first.source.contains("t=REDACTED"))
        // The server saw the full, salted URL: the fetch uses the location, not the key.
        #expect(server.queries("/rest/getCoverArt").last?.contains("s=salt2") == true)
    }

    @Test("the key changes when a stage parameter changes")
    func keyHasParameters() async throws {
        let source = server.url("/rest/getCoverArt?id=9")
        let small = try await TestPipeline.run(TestPipeline.thumbnail(size: 64), source: source)
        let large = try await TestPipeline.run(TestPipeline.thumbnail(size: 128), source: source)
        #expect(small.sourceKey == large.sourceKey)
        #expect(small.key != large.key)
    }

    @Test("the blurred-background example makes a blurred, dimmed image")
    func blurredBackground() async throws {
        let set = try ProfileLoader(registry: TestPipeline.registry()).load(
            file: Fixtures.path("examples/blurred-background.lua"))
        let cache = try TemporaryDirectory()
        let result = try await Pipeline(profiles: set, configuration: TestPipeline.configuration(cacheIn: cache))
            .image(for: ImageRequest(source: server.url("/rest/getCoverArt"), profile: "blurred-background"))
        let plain = try await TestPipeline.run(
            TestPipeline.thumbnail(size: 512, fit: "inside"), source: server.url("/rest/getCoverArt"))
        let blurred = try #require(Fixtures.stats(result.bytes.array))
        let reference = try #require(Fixtures.stats(plain.bytes.array))
        #expect(result.size == PixelSize(width: 512, height: 341))
        #expect(blurred.sharpness < reference.sharpness / 2)
        #expect(blurred.mean < reference.mean * 0.75)
    }

    @Test("a failure names the redacted source and the cause")
    func failure() async throws {
        server.route("/html", .ok(Array("<html><body>Please log in</body></html>".utf8), contentType: "image/jpeg"))
        let error = try await TestPipeline.failure(TestPipeline.thumbnail(), source: server.url("/html?id=1&p=hunter2"))
        #expect(error?.kind == .notAnImage)
        #expect(error?.description == server.url("/html?id=1&p=REDACTED") + ": not an image (text/html)")
    }

    @Test("an unknown profile name is a profile error")
    func unknownProfile() async throws {
        let pipeline = Pipeline(profiles: try TestPipeline.load(TestPipeline.thumbnail()))
        await #expect(throws: PipelineError.self) {
            try await pipeline.image(for: ImageRequest(source: server.url("/rest/getCoverArt"), profile: "thumb"))
        }
    }
}
