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
        #expect(filtered.width == Self.side && filtered.height == Self.side * Self.frames)
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
}
