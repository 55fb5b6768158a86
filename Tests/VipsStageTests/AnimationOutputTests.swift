import Foundation
import PipelineHost
import TestSupport
import Testing

/// What a user gets from an animated source without asking: an animation wherever the output
/// can animate, a still of frame one where the profile asks for a format that cannot, and the
/// right frames in the right order.
@Suite("animations stay animated where the output animates", .needs(.pixels))
struct AnimationOutputTests {
    static let frames = 8, width = 96, height = 64
    let directory: TemporaryDirectory
    /// A pan across the sample photo, 24 px a frame.
    let pan: String

    init() throws {
        directory = try TemporaryDirectory()
        pan = try directory.write(
            "pan.gif", Fixtures.photoPan(frames: Self.frames, width: Self.width, height: Self.height, step: 24))
    }

    /// The pan through decode, a resize to 48 px and `encode`, as a viewer sending `accept` gets it.
    func answer(_ encode: String, decode: String = "decode {}", accept: String? = nil) async throws
        -> (format: String?, info: Fixtures.Info)
    {
        let set = try TestPipeline.load(#"profile "p" { fetch {}, \#(decode), downsample { size = 48 }, \#(encode) }"#)
        let result = try await Pipeline(profiles: set).image(
            for: set.request(source: pan, profile: "p", accept: accept).request)
        return (result.format, try #require(Fixtures.info(result.bytes.array)))
    }

    @Test(
        "with frames left out, webp, gif and source output keep every frame",
        arguments: [
            (#"encode { format = "webp" }"#, "webp"), (#"encode { format = "gif" }"#, "gif"),
            (#"encode { format = "source" }"#, "gif"),
        ])
    func keptByDefault(encode: String, format: String) async throws {
        let (written, info) = try await answer(encode)
        #expect(written == format && info.format == format)
        #expect((info.pages, info.width, info.height) == (Self.frames, 48, 32))
    }

    @Test(
        "a format that cannot animate gets frame one as a still; frames = 1 is a still in any format",
        arguments: [
            (#"encode { format = "jpeg" }"#, "decode {}", "jpeg"), (#"encode { format = "png" }"#, "decode {}", "png"),
            (#"encode { format = "webp" }"#, "decode { frames = 1 }", "webp"),
        ])
    func stillOfFrameOne(encode: String, decode: String, format: String) async throws {
        let (written, info) = try await answer(encode, decode: decode)
        #expect(written == format)
        #expect((info.pages, info.width, info.height) == (1, 48, 32), "one frame, not the strip of eight")
    }

    @Test("format = \"auto\" animates: webp for a viewer that takes it, else gif, never a JPEG of frame one")
    func autoAnimates() async throws {
        let encode = #"encode { format = "auto" }"#
        let browser = try await answer(encode, accept: "image/avif,image/webp,*/*")
        #expect(browser.format == "webp" && browser.info.pages == Self.frames)
        let old = try await answer(encode, accept: "image/png,*/*")
        #expect(old.format == "gif" && old.info.pages == Self.frames)
        let none = try await answer(encode)
        #expect(none.format == "gif" && none.info.pages == Self.frames, "no Accept header: gif")
    }

    @Test("animation_format keeps animations beside a still format, which stills keep")
    func animationFormat() async throws {
        let encode = #"encode { format = "jpeg", animation_format = "gif" }"#
        let animated = try await answer(encode)
        #expect(animated.format == "gif" && animated.info.pages == Self.frames)
        let still = try directory.write("still.png", Fixtures.quadrants(width: 96, height: 64, format: .png))
        let set = try TestPipeline.load(#"profile "p" { fetch {}, decode {}, downsample { size = 48 }, \#(encode) }"#)
        let result = try await Pipeline(profiles: set).image(for: ImageRequest(source: still, profile: "p"))
        #expect(result.format == "jpeg")
    }

    @Test("frame k of the answer is frame k of the source, resized (PSNR against every frame)")
    func framesInOrder() async throws {
        let set = try TestPipeline.load(
            #"profile "p" { fetch {}, decode {}, downsample { size = 48 }, encode { format = "webp", lossless = true } }"#
        )
        let result = try await Pipeline(profiles: set).image(for: ImageRequest(source: pan, profile: "p"))
        let answer = try #require(Fixtures.decodedFrames(result.bytes.array))
        let source = try #require(Fixtures.decodedFrames(try Fixtures.read(pan)))
        try #require(answer.width == 48 && answer.height == 32 * Self.frames)
        for k in 0..<Self.frames {
            let scores = (0..<Self.frames).map { j in psnr(answer, frame: k, halvedSource: source, frame: j) }
            let best = scores.indices.max { scores[$0] < scores[$1] }
            #expect(best == k && scores[k] > 24, "frame \(k): \(scores.map { Int($0) })")
        }
    }

    @Test(
        "each frame's delay and the loop count come through every frame-aware stage, into webp and gif",
        arguments: ["webp", "gif"])
    func timingKept(format: String) async throws {
        let path = try directory.write("timed.gif", Fixtures.animatedGIF(frames: 5, side: 40, delayMs: 70, loop: 3))
        let stages =
            #"downsample { size = 24, fit = "cover", gravity = "attention" }, blur { sigma = 1, size = 32 }, sharpen {}, rotate { angle = 90 }, flip {}, pad { width = 40, height = 40 }, round_corners { radius = 4 }, trim {},"#
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, \#(stages) encode { format = "\#(format)" } }"#, source: path)
        let info = try #require(Fixtures.info(result.bytes.array))
        // trim takes the padding off again: the union of the frames' 32 x 32 pictures.
        #expect((info.pages, info.width, info.height) == (5, 32, 32))
        let timing = try #require(Fixtures.timing(result.bytes.array))
        #expect(timing.delays == [70, 70, 70, 70, 70] && timing.loop == 3)
    }

    @Test("effort reaches the GIF quantizer: left out it is the fastest, and 9 gives other bytes")
    func gifEffort() async throws {
        // A WebP source: a GIF's frames keep their own palettes, which nothing quantizes.
        let webp = try directory.write(
            "pan.webp",
            Fixtures.photoPan(frames: Self.frames, width: Self.width, height: Self.height, step: 24, webp: true))
        let fast = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, encode { format = "gif" } }"#, source: webp)
        let fastest = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, encode { format = "gif", effort = 0 } }"#, source: webp)
        let slow = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, encode { format = "gif", effort = 9 } }"#, source: webp)
        #expect(firstDifference(fast.bytes, fastest.bytes) == nil)
        #expect(fast.bytes.array != slow.bytes.array)
    }

    @Test("the encode budget counts an animation's frames; its still is one frame's cost")
    func encodeBudgetCountsFrames() async throws {
        // 50 frames of 600 x 600 are 18 megapixels: over the budget for webp at effort 9
        // (7 JPEG units a pixel), where one frame is far below it.
        let path = try directory.write("big.gif", Fixtures.sparseGIF(frames: 50, side: 600))
        let error = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "webp", effort = 9 } }"#, source: path)
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason.hasPrefix("encode: 18 megapixels (50 frames) as webp at effort 9") == true)
        let still = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode { frames = 1 }, encode { format = "webp", effort = 9 } }"#, source: path)
        #expect(still == nil, "one frame fits")
    }

    @Test("a GIF's encode budget is its quantizer's: 8 megapixels fit at effort 1, not at effort 9")
    func gifBudget() async throws {
        // 50 frames of 400 x 400: 8 megapixels, 80 of the budget's 100 million JPEG-pixel units at
        // effort 1 (ten a pixel), 800 at effort 9.
        let path = try directory.write("gif-budget.gif", Fixtures.sparseGIF(frames: 50, side: 400))
        let fast = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "gif" } }"#, source: path)
        #expect(fast == nil, "\(fast?.reason ?? "")")
        let slow = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "gif", effort = 9 } }"#, source: path)
        #expect(slow?.kind == .pixelLimit)
        #expect(
            slow?.reason.hasPrefix("encode: 8.0 megapixels (50 frames) as gif at effort 9") == true,
            "\(slow?.reason ?? "")")
    }

    /// The PSNR of the answer's frame `k` against the source's frame `j` halved by 2 x 2
    /// averages, on the colour bands.
    func psnr(_ answer: Fixtures.Pixels, frame k: Int, halvedSource source: Fixtures.Pixels, frame j: Int)
        -> Double
    {
        var squares = 0.0, count = 0.0
        for y in 0..<32 {
            for x in 0..<48 {
                let got = answer[x, k * 32 + y]
                for band in 0..<3 {
                    var sum = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        sum += Int(source[2 * x + dx, j * 64 + 2 * y + dy][band])
                    }
                    let difference = Double(got[band]) - Double(sum) / 4
                    squares += difference * difference
                    count += 1
                }
            }
        }
        return 10 * log10(255 * 255 / max(squares / count, 1e-9))
    }
}

/// Animated AVIF: libheif 1.15 writes stills only, so an animation is an AV1 sequence written by
/// libavif (ph_avif_save.c).
extension AnimationOutputTests {
    /// The pan through `stages` and `encode`, read back frame by frame through libavif.
    func avifAnswer(_ encode: String, stages: String = "downsample { size = 48 },", source: String? = nil)
        async throws -> (frames: Fixtures.Pixels, delays: [Int])
    {
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, \#(stages) \#(encode) }"#, source: source ?? pan)
        #expect(result.format == "avif")
        return try #require(Fixtures.avifFrames(result.bytes.array), "an AVIF libavif reads")
    }

    @Test("format = \"avif\" keeps an animation animated: every frame, in order, each its own picture")
    func avifSequence() async throws {
        let answer = try await avifAnswer(#"encode { format = "avif" }"#)
        let source = try #require(Fixtures.decodedFrames(try Fixtures.read(pan)))
        try #require(answer.frames.width == 48 && answer.frames.height == 32 * Self.frames)
        for k in 0..<Self.frames {
            let scores = (0..<Self.frames).map { j in psnr(answer.frames, frame: k, halvedSource: source, frame: j) }
            let best = scores.indices.max { scores[$0] < scores[$1] }
            #expect(best == k && scores[k] > 24, "frame \(k): \(scores.map { Int($0) })")
        }
    }

    @Test("animated AVIF keeps each frame's delay, and animation_format = \"avif\" animates beside a still format")
    func avifTiming() async throws {
        let path = try directory.write("timed.gif", Fixtures.animatedGIF(frames: 5, side: 40, delayMs: 70, loop: 0))
        for encode in [#"encode { format = "avif" }"#, #"encode { format = "jpeg", animation_format = "avif" }"#] {
            let answer = try await avifAnswer(encode, stages: "", source: path)
            #expect(answer.delays == [70, 70, 70, 70, 70], "\(encode)")
            #expect(answer.frames.height == 40 * 5)
        }
    }

    @Test("lossless animated AVIF gives back every frame's pixels exactly, as lossless WebP does")
    func avifLossless() async throws {
        let avif = try await avifAnswer(#"encode { format = "avif", lossless = true }"#)
        let webp = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 48 }, encode { format = "webp", lossless = true } }"#,
            source: pan)
        let exact = try #require(Fixtures.decodedFrames(webp.bytes.array))
        try #require(avif.frames.width == exact.width && avif.frames.height == exact.height)
        var different = 0
        for y in 0..<exact.height {
            for x in 0..<exact.width where avif.frames[x, y].prefix(3) != exact[x, y].prefix(3) { different += 1 }
        }
        #expect(different == 0, "\(different) pixels differ")
    }

    @Test("an animation with alpha keeps it in AVIF, frame by frame")
    func avifAlpha() async throws {
        let answer = try await avifAnswer(
            #"encode { format = "avif" }"#, stages: "downsample { size = 48 }, round_corners { radius = 12 },")
        try #require(answer.frames.bands == 4)
        for k in 0..<Self.frames {
            #expect(answer.frames[0, k * 32][3] < 16 && answer.frames[24, k * 32 + 16][3] > 240, "frame \(k)")
        }
    }
}
