import PipelineHost
import TestSupport
import Testing
import VipsPlugin

/// A small input that passes max_pixels must not become a huge output: every stage's result is
/// held to max_output_pixels before its pixels are computed, and an encode to its cost.
@Suite("output pixels and encode cost are bounded, whatever the input's size", .needs(.pixels))
struct OutputLimitTests {
    let directory: TemporaryDirectory
    let small = Fixtures.quadrants(width: 64, height: 40, format: .png)
    init() throws { directory = try TemporaryDirectory() }

    func failure(_ stages: String, decode: String = "", encode: String = #"format = "png""#) async throws
        -> PipelineError?
    {
        let path = try directory.write("small.png", small)
        return try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode { \#(decode) }, \#(stages), encode { \#(encode) } }"#,
            source: path)
    }

    @Test(
        "a stage that would make more than 50 megapixels is a pixel_limit error naming it",
        arguments: [
            ("pad { width = 16384, height = 16384 }", "pad"),
            ("downsample { size = 16384, enlarge = true, dpr = 5 }", "downsample"),
            ("downsample { size = 8000, enlarge = true }, pad { width = 16384, height = 8000 }", "pad"),
            ("round_corners { radius = 4 }, pad { width = 9000, height = 9000 }", "pad"),
        ])
    func stageOutput(_ stages: String, _ stage: String) async throws {
        let error = try await failure(stages)
        #expect(error?.kind == .pixelLimit, "\(String(describing: error))")
        #expect(error?.reason.hasPrefix(stage) == true, "\(String(describing: error))")
        #expect(error?.reason.contains("over max_output_pixels (50 megapixels)") == true)
    }

    @Test("max_output_pixels is the profile's to set")
    func profileSetting() async throws {
        let refused = try await failure("downsample { size = 1400, enlarge = true }", decode: "max_output_pixels = 1e6")
        #expect(refused?.kind == .pixelLimit)
        #expect(
            refused?.reason.contains("over max_output_pixels (1.0 megapixels)") == true,
            "\(String(describing: refused))")
        let allowed = try await failure("downsample { size = 900, enlarge = true }", decode: "max_output_pixels = 1e6")
        #expect(allowed == nil)
    }

    @Test("an encode whose cost passes the budget is refused before it runs")
    func encodeCost() async throws {
        // 36 megapixels is under the pixel limit; as webp at effort 9 it is over the budget.
        let error = try await failure("pad { width = 6000, height = 6000 }", encode: #"format = "webp", effort = 9"#)
        #expect(error?.kind == .pixelLimit, "\(String(describing: error))")
        #expect(
            error?.reason.contains("encode: 36 megapixels as webp at effort 9 is over the encode budget") == true,
            "\(String(describing: error))")
        if VipsPlugin.canWrite("avif") {
            let avif = try await failure("pad { width = 3000, height = 3000 }", encode: #"format = "avif", effort = 9"#)
            #expect(
                avif?.reason.contains("as avif at effort 9 is over the encode budget (2.0 megapixels") == true,
                "\(String(describing: avif))")
        }
    }
}

extension OutputLimitTests {
    /// A 169-megapixel header (a few dozen bytes with no pixels): a refusal that reads no pixel
    /// is pixel_limit, one that starts the work would fail to decode it.
    @Test(
        "a 169-megapixel source is refused by the encode budget before any pixel is read, whatever max_pixels allows",
        arguments: [
            ("jpeg", "169 megapixels as jpeg"), ("png", "169 megapixels as png"), ("webp", "169 megapixels as webp"),
        ])
    func encodeBudgetBeforeWork(_ format: String, _ says: String) async throws {
        let path = try directory.write("huge.png", Fixtures.bombPNG(width: 13000, height: 13000))
        let error = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode { max_pixels = 1e10 }, encode { format = "\#(format)" } }"#, source: path)
        #expect(error?.kind == .pixelLimit, "\(String(describing: error))")
        #expect(error?.reason.contains("encode: \(says)") == true, "\(String(describing: error))")
    }

    @Test("PNG costs three JPEG pixels: 36 megapixels of PNG are over the budget, of JPEG under it")
    func pngCostsMore() async throws {
        let png = try await failure("pad { width = 6000, height = 6000 }", decode: "max_output_pixels = 40e6")
        #expect(
            png?.reason.contains("encode: 36 megapixels as png is over the encode budget (33 megapixels") == true,
            "\(String(describing: png))")
        let jpeg = try await failure(
            "pad { width = 6000, height = 6000 }", decode: "max_output_pixels = 40e6", encode: #"format = "jpeg""#)
        #expect(jpeg == nil, "\(String(describing: jpeg))")
    }

    @Test("max_output_pixels cannot be raised past the encode budget: the profile does not load")
    func outputLimitIsCapped() async throws {
        #expect(throws: ProfileError.self) {
            try TestPipeline.load(#"profile "p" { fetch {}, decode { max_output_pixels = 1e10 }, encode {} }"#)
        }
    }
}

@Suite("cancelled pixel work gives its core back", .hangLimit, .needs(.pixels))
struct VipsCancellationTests {
    /// Five blurs of 36 megapixels at sigma 200, each a computation of about 20 seconds of CPU.
    /// Its only request leaves: libvips stops within a region, and the stage ends as cancelled.
    /// The work would last minutes, not a window a busy machine's pause could close, and the
    /// cancellation stops it in its first seconds.
    @Test("the last waiter leaving stops libvips mid-computation")
    func stopsMidComputation() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("large.png", Fixtures.quadrants(width: 6000, height: 6000, format: .png))
        let blurs = Array(repeating: "blur { sigma = 200 }", count: 5).joined(separator: ", ")
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(#"profile "p" { fetch {}, decode {}, \#(blurs), encode {} }"#),
            configuration: PipelineConfiguration(cpuStages: 1))
        let before = VipsPlugin.stoppedComputations
        let request = Task { try await pipeline.image(for: ImageRequest(source: path, profile: "p")) }
        // Decoded (the header only) and a blur has the CPU slot: the first reads the pixels and
        // blurs them in one computation, which the cancellation stops, as it stops any later one.
        #expect(
            await eventually {
                let (decodes, running) = (await pipeline.stats().decodes, await pipeline.activity().runningCPU)
                return decodes == 1 && running == 1
            })
        request.cancel()
        #expect(await eventually(within: 120) { VipsPlugin.stoppedComputations > before })
        await pipeline.waitForActivity { $0.isIdle }
    }
}
