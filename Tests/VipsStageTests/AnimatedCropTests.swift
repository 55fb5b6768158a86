import CVips
import Foundation
import PipelineHost
import TestSupport
import Testing

/// A cover crop of an animation keeps every frame, and cuts the same box from each.
@Suite("cover crops keep every frame of an animation", .needs(.pixels))
struct AnimatedCropTests {
    static let frames = 6

    /// A 64x32 animation of `frames` flat greys through `downsample`.
    private func cropped(_ downsample: String) async throws -> (info: Fixtures.Info, stacked: Fixtures.Pixels) {
        try await TestPipeline.animation(
            frames: Self.frames, width: 64, height: 32, through: "downsample { \(downsample) },")
    }

    @Test(
        "every frame is kept, each still its own grey",
        arguments: [
            #"size = 16, fit = "cover""#, #"size = 16, fit = "cover", gravity = "attention""#,
            #"size = 16, fit = "cover", gravity = "entropy""#, #"size = 16, fit = "cover", gravity = "east""#,
            #"width = 16, height = 16, fit = "cover", focus = { 0.2, 0.5 }"#,
        ])
    func keepsFrames(downsample: String) async throws {
        let (info, stacked) = try await cropped(downsample)
        #expect((info.width, info.height, info.pages) == (16, 16, Self.frames), "\(downsample)")
        #expect(stacked.width == 16 && stacked.height == 16 * Self.frames)
        for frame in 0..<Self.frames {
            let shade = Int(Fixtures.animationShade(frame))
            let samples = (0..<16).flatMap { y in (0..<16).map { x in Int(stacked[x, frame * 16 + y][0]) } }
            let worst = samples.map { abs($0 - shade) }.max() ?? 0
            #expect(worst <= 2, "frame \(frame) of \(downsample): off its grey \(shade) by \(worst)")
        }
    }

    @Test(
        "attention picks one box, on the first frame, for every frame",
        arguments: [#"gravity = "attention""#, #"gravity = "entropy""#])
    func oneBox(gravity: String) async throws {
        // A white square on the right of the first frame and on the left of the others, on black:
        // one box for all frames keeps the right half, so only the first frame shows white.
        let directory = try TemporaryDirectory()
        let gif = Fixtures.animatedGIF(frames: Self.frames, width: 64, height: 32) { frame, x, y in
            let left = frame == 0 ? 44 : 4
            // Each frame's black a shade apart: a WebP encoder merges identical frames.
            let black = UInt8(frame * 4)
            return (left..<left + 16).contains(x) && (8..<24).contains(y) ? [255, 255, 255] : [black, black, black]
        }
        let path = try directory.write("square.gif", gif)
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = \#(Self.frames) }, downsample { size = 16, fit = "cover", \#(gravity) }, encode { format = "webp", lossless = true } }"#,
            source: path)
        let stacked = try #require(Fixtures.decodedFrames(result.bytes.array))
        try #require(stacked.width == 16 && stacked.height == 16 * Self.frames)
        let brightest = (0..<Self.frames).map { frame in
            (0..<16).flatMap { y in (0..<16).map { x in stacked[x, frame * 16 + y][0] } }.max() ?? 0
        }
        #expect(brightest[0] > 200, "the first frame's square is in the box: \(brightest)")
        #expect(brightest.dropFirst().allSatisfy { $0 < 60 }, "the other frames' squares are not: \(brightest)")
    }

    @Test(
        "a decoded animation (another stage ran before downsample) keeps every frame too",
        arguments: [PH_CROP_CENTRE, PH_CROP_ATTENTION, PH_CROP_ENTROPY, PH_CROP_AT])
    func decodedKeepsFrames(mode: ph_crop_mode) throws {
        let bytes = Fixtures.animatedGIF(frames: Self.frames, width: 64, height: 32)
        let opened = bytes.withUnsafeBytes { ph_vips_open($0.baseAddress, $0.count, Int32(Self.frames)) }
        let image = try #require(opened)
        defer { ph_vips_unref(image) }
        var out: UnsafeMutablePointer<VipsImage>?
        #expect(ph_vips_thumbnail_image(image, 16, 16, ph_crop(mode: mode, x: 0.8, y: 0.5), 0, &out) == 0)
        let cropped = try #require(out)
        defer { ph_vips_unref(cropped) }
        #expect(cropped.pointee.Xsize == 16 && cropped.pointee.Ysize == 16 * Int32(Self.frames))
        #expect(ph_vips_page_height(cropped) == 16)
    }
}
