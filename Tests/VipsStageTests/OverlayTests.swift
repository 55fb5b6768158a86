import PipelineHost
import PipelineProfiles
import TestSupport
import Testing

/// overlay: a watermark file next to the profile, drawn by gravity, margin, opacity and scale.
@Suite("overlay: a watermark", .needs(.pixels, .network))
struct OverlayTests {
    let directory: TemporaryDirectory
    let base: String
    static let blue: [UInt8] = [0, 0, 255], red: [UInt8] = [255, 0, 0]

    init() throws {
        directory = try TemporaryDirectory()
        base = try directory.write("base.png", Fixtures.painted(width: 200, height: 100) { _, _ in Self.blue })
        _ = try directory.write("mark.png", Fixtures.painted(width: 20, height: 20) { _, _ in Self.red })
    }

    /// Loads a profile file in the directory, as `run` does, so `image` is relative to it.
    func load(_ overlay: String, fetch: String = "fetch {}") throws -> ProfileSet {
        let file = try directory.write(
            "watermark.lua",
            Array(
                """
                profile "p" {
                  \(fetch), decode {},
                  \(overlay),
                  encode { format = "png" },
                }
                """.utf8))
        return try ProfileLoader(registry: TestPipeline.registry()).load(file: file)
    }

    func pixels(_ overlay: String) async throws -> Fixtures.Pixels {
        let result = try await Pipeline(profiles: try load(overlay)).image(
            for: ImageRequest(source: base, profile: "p"))
        return try #require(Fixtures.decoded(result.bytes.array))
    }

    static func near(_ pixel: [UInt8], _ expected: [UInt8], within tolerance: Int = 2) -> Bool {
        zip(pixel, expected).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    @Test("corner pixels are the overlay at the requested opacity; outside it the image is untouched")
    func opacity() async throws {
        let pixels = try await pixels(#"overlay { image = "mark.png", opacity = 0.5 }"#)
        #expect((pixels.width, pixels.height, pixels.bands) == (200, 100, 3))
        #expect(
            Self.near(pixels[199, 99], [128, 0, 128]) && Self.near(pixels[180, 80], [128, 0, 128]), "\(pixels[199, 99])"
        )
        #expect(pixels[178, 99] == Self.blue && pixels[199, 78] == Self.blue && pixels[0, 0] == Self.blue)
    }

    @Test("scale sizes it to a fraction of the image's width, and margin keeps it off the edge")
    func scaleAndMargin() async throws {
        let pixels = try await pixels(
            #"overlay { image = "mark.png", scale = 0.25, gravity = "north_west", margin = 10 }"#)
        // 50x50 at (10, 10).
        #expect(pixels[12, 12] == Self.red && pixels[57, 57] == Self.red)
        #expect(pixels[5, 5] == Self.blue && pixels[63, 30] == Self.blue && pixels[30, 63] == Self.blue)
    }

    @Test("replacing the file changes the stage's identity, so variants are made again")
    func identityFollowsTheFile() throws {
        func identity() throws -> String {
            try #require(try load(#"overlay { image = "mark.png" }"#).profiles[0].stages.first { $0.name == "overlay" })
                .identity.description
        }
        let before = try identity()
        _ = try directory.write("mark.png", Fixtures.painted(width: 20, height: 20) { _, _ in [0, 255, 0] })
        #expect(try identity() != before)
        #expect(try identity() == identity(), "and stays the same for the same file")
    }

    @Test("an overlay from a URL is fetched once, by the profile's fetch stage, and shared by every request")
    func fromURL() async throws {
        let origin = try LoopbackServer()
        origin.route(
            "/mark.png", .delayed(seconds: 0.2, .ok(Fixtures.painted(width: 20, height: 20) { _, _ in Self.red })))
        let profiles = try load(#"overlay { image = "\#(origin.url("/mark.png"))", opacity = 0.5 }"#)
        let pipeline = Pipeline(profiles: profiles)
        let bases = try (0..<4).map { index in
            try directory.write("base\(index).png", Fixtures.painted(width: 200, height: 100) { _, _ in Self.blue })
        }
        let results = try await withThrowingTaskGroup(of: PipelineResult.self) { group in
            for base in bases {
                group.addTask { try await pipeline.image(for: ImageRequest(source: base, profile: "p")) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            let pixels = try #require(Fixtures.decoded(result.bytes.array))
            #expect(Self.near(pixels[199, 99], [128, 0, 128]) && pixels[0, 0] == Self.blue)
        }
        #expect(origin.requestCount("/mark.png") == 1, "one transfer for four requests")
    }

    @Test("the URL is fetched by the profile's rules (block_private refuses loopback), and a failure is not kept")
    func urlRules() async throws {
        let origin = try LoopbackServer()
        origin.route("/mark.png", .ok(Fixtures.painted(width: 20, height: 20) { _, _ in Self.red }))
        let file = try directory.write(
            "strict.lua",
            Array(
                ##"profile "p" { fetch { block_private = true }, decode {}, overlay { image = "\##(origin.url("/mark.png"))" }, encode {} }"##
                    .utf8))
        let strict = Pipeline(profiles: try ProfileLoader(registry: TestPipeline.registry()).load(file: file))
        // The base is a file (fetch reads paths), the overlay an http URL on loopback.
        let refused = await #expect(throws: PipelineError.self) {
            try await strict.image(for: ImageRequest(source: base, profile: "p"))
        }
        #expect(refused?.reason.hasPrefix("overlay image http://127.0.0.1:") == true, "\(String(describing: refused))")
        #expect(origin.requestCount("/mark.png") == 0)

        origin.route(
            "/flaky.png", .sequence([.status(503), .ok(Fixtures.painted(width: 20, height: 20) { _, _ in Self.red })]))
        let flaky = Pipeline(
            profiles: try load(#"overlay { image = "\#(origin.url("/flaky.png"))" }"#, fetch: "fetch { retries = 0 }"))
        let first = await #expect(throws: PipelineError.self) {
            try await flaky.image(for: ImageRequest(source: base, profile: "p"))
        }
        #expect(
            first?.reason.hasPrefix("overlay image") == true && first?.reason.contains("503") == true,
            "\(String(describing: first))")
        let second = try await flaky.image(for: ImageRequest(source: base, profile: "p"))
        #expect(
            try #require(Fixtures.decoded(second.bytes.array))[199, 99] == Self.red,
            "the second request fetched it again")
    }

    @Test("a missing or broken file is an error at load, with file:line")
    func refused() throws {
        _ = try directory.write("broken.png", Array("<html>no</html>".utf8))
        for (overlay, message) in [
            (#"overlay { image = "missing.png" }"#, "image \"missing.png\" (looked at"),
            (#"overlay { image = "broken.png" }"#, "is not an image libvips reads"),
            ("overlay { opacity = 0.5 }", "overlay needs image"),
        ] {
            let error = #expect(throws: ProfileError.self) { try load(overlay) }
            #expect(
                error?.description.contains("watermark.lua:3:") == true && error?.description.contains(message) == true,
                "\(String(describing: error))")
        }
    }

    @Test("an animation gets the mark at the same place on every frame")
    func eachFrame() async throws {
        let gif = try directory.write(
            "anim.gif",
            Fixtures.animatedGIF(frames: 3, width: 60, height: 40) { frame, _, _ in [0, 0, UInt8(200 + frame * 20)] })
        let file = try directory.write(
            "animated.lua",
            Array(
                #"profile "p" { fetch {}, decode {}, overlay { image = "mark.png", gravity = "south_east" }, encode { format = "webp", lossless = true } }"#
                    .utf8))
        let result = try await Pipeline(profiles: try ProfileLoader(registry: TestPipeline.registry()).load(file: file))
            .image(for: ImageRequest(source: gif, profile: "p"))
        let stacked = try #require(Fixtures.decodedFrames(result.bytes.array))
        try #require(stacked.width == 60 && stacked.height == 120)
        for frame in 0..<3 {
            // The 20 x 20 mark fills each frame's bottom-right corner, and nothing above it.
            #expect(Self.near(Array(stacked[55, frame * 40 + 35].prefix(3)), Self.red), "frame \(frame)")
            #expect(!Self.near(Array(stacked[55, frame * 40 + 5].prefix(3)), Self.red), "frame \(frame)")
        }
    }
}
