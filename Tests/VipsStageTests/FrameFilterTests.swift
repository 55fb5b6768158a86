import Foundation
import PipelineHost
import TestSupport
import Testing

/// An animation is one tall image of stacked frames; a filter that reads neighbouring pixels
/// (blur, sharpen) runs on each frame on its own, so no frame takes colour from the next.
@Suite("blur and sharpen filter each frame of an animation on its own", .needs(.pixels))
struct FrameFilterTests {
    static let frames = 6, side = 32

    /// The frames stacked in one PNG, through `stages` (or none).
    private func stacked(_ path: String, _ stages: String) async throws -> Fixtures.Pixels {
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = \#(Self.frames) }, \#(stages) encode { format = "png" } }"#,
            source: path)
        return try #require(Fixtures.decoded(result.bytes.array))
    }

    @Test(
        "each frame (a flat grey, the next one 37 levels apart) stays flat to its edges",
        arguments: ["blur { sigma = 3 },", "sharpen { sigma = 2, amount = 10 },"])
    func noBleed(stage: String) async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: Self.frames, side: Self.side))
        let plain = try await stacked(path, "")
        let filtered = try await stacked(path, stage)
        try #require(filtered.width == Self.side && filtered.height == Self.side * Self.frames)
        var worst = (difference: 0, x: 0, y: 0)
        for y in 0..<filtered.height {
            for x in 0..<filtered.width {
                let difference = zip(filtered[x, y], plain[x, y]).map { abs(Int($0) - Int($1)) }.max() ?? 0
                if difference > worst.difference { worst = (difference, x, y) }
            }
        }
        #expect(
            worst.difference <= 2,
            "\(stage) changed (\(worst.x), \(worst.y)), row \(worst.y % Self.side) of frame \(worst.y / Self.side), by \(worst.difference)"
        )
    }

    @Test("a blurred animation stays an animation of the same frames")
    func staysAnimated() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: Self.frames, side: Self.side))
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = \#(Self.frames) }, blur { sigma = 2 }, sharpen {}, encode { format = "webp" } }"#,
            source: path)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.width, info.height, info.pages) == (Self.side, Self.side, Self.frames))
    }

    private func wide(_ stages: String) async throws -> (info: Fixtures.Info, stacked: Fixtures.Pixels) {
        try await TestPipeline.animation(frames: Self.frames, width: 64, height: 32, through: stages)
    }

    @Test(
        "rotate and flip turn or mirror each frame, in order",
        arguments: [
            ("rotate { angle = 90 },", 32, 64), ("rotate { angle = 180 },", 64, 32),
            (#"flip { direction = "vertical" },"#, 64, 32), (#"flip { direction = "horizontal" },"#, 64, 32),
        ])
    func turnsEachFrame(stage: String, width: Int, height: Int) async throws {
        let (info, stacked) = try await wide(stage)
        #expect((info.width, info.height, info.pages) == (width, height, Self.frames), "\(stage)")
        try #require(stacked.width == width && stacked.height == height * Self.frames, "\(stage)")
        for frame in 0..<Self.frames {
            let shade = Int(Fixtures.animationShade(frame))
            #expect(Int(stacked[width / 2, frame * height + height / 2][0]) == shade, "frame \(frame) after \(stage)")
        }
    }

    @Test("round_corners rounds the corners of every frame")
    func roundsEachFrame() async throws {
        let (info, stacked) = try await wide("round_corners { radius = 8 },")
        #expect(info.pages == Self.frames)
        try #require(stacked.bands == 4 && stacked.width == 64 && stacked.height == 32 * Self.frames)
        for frame in 0..<Self.frames {
            let top = frame * 32
            #expect(stacked[0, top][3] == 0 && stacked[63, top + 31][3] == 0, "frame \(frame)'s corners")
            #expect(stacked[32, top + 16][3] == 255, "frame \(frame)'s middle")
        }
    }

    @Test(
        "pad and contain pad each frame, never the strip",
        arguments: [
            (##"pad { width = 80, height = 48, background = "#ff0000" },"##, 80, 48),
            (##"downsample { size = 32, fit = "contain", background = "#ff0000" },"##, 32, 32),
        ])
    func padsEachFrame(stage: String, width: Int, height: Int) async throws {
        let (info, stacked) = try await wide(stage)
        #expect((info.width, info.height, info.pages) == (width, height, Self.frames), "\(stage)")
        try #require(stacked.width == width && stacked.height == height * Self.frames)
        for frame in 0..<Self.frames {
            let top = frame * height
            #expect(Array(stacked[0, top].prefix(3)) == [255, 0, 0], "frame \(frame)'s padding after \(stage)")
            let shade = Int(Fixtures.animationShade(frame))
            #expect(abs(Int(stacked[width / 2, top + height / 2][0]) - shade) <= 2, "frame \(frame)'s picture")
        }
    }
}
