import CVips
import Foundation
import TestSupport
import Testing

/// A GIF whose frames store only what changed (a screen recording's typed characters) is
/// resized a changed box at a time: each frame is the one before with only the pixels near the
/// change computed afresh (ph_frame_changes.c). The answer must be the one every frame computed
/// whole gives, so each case resizes the same pictures twice: as stored in small boxes, and as a
/// GIF whose every frame is the whole screen, composed here from the boxes.
@Suite("An animation resized a changed box at a time", .needs(.pixels))
struct FrameChangeTests {
    static let width = 240, height = 160, frames = 30
    /// Three colours and, last, the index the boxes leave transparent (never shown as a colour).
    static let palette: [[UInt8]] = [[20, 20, 30], [230, 230, 220], [200, 60, 60], [60, 160, 220]]
    static let hole: UInt8 = 3

    /// Where frame k's box is: typed along rows, with boxes at the screen's corners and edges.
    static func corner(_ k: Int) -> (Int, Int) {
        switch k {
        case 1: (0, 0)
        case 9, 10: (width - 8, height - 6)
        case 20: (0, height - 6)
        case 21: (width - 8, 0)
        default: ((k * 9) % (width - 8), 40 + (k * 9) / (width - 8) * 7)
        }
    }

    /// A screen of stripes, then boxes of 8 x 6 with holes. Cleared and restored boxes (`disposals`)
    /// make the frame before's box change back as well.
    static func sparse(disposals: Bool) -> HandGIF {
        let first = HandGIF.Frame(width: width, height: height) { x, y in UInt8((x / 3 + y / 5) % 3) }
        let boxes = (1..<frames).map { k in
            let (left, top) = corner(k)
            let disposal = disposals ? [1, 2, 3][k % 3] : 1
            return HandGIF.Frame(left: left, top: top, width: 8, height: 6, transparent: Int(hole), disposal: disposal)
            {
                x, y in UInt8((x + y + k) % 4)
            }
        }
        return HandGIF(width: width, height: height, palette: palette, frames: [first] + boxes)
    }

    /// Each frame of `gif` as shown: a palette index per pixel, nil where nothing is drawn. A
    /// frame cleared after it is shown leaves its box transparent; one restored puts back what
    /// was there before it.
    static func composed(_ gif: HandGIF) -> [[UInt8?]] {
        var screen = [UInt8?](repeating: nil, count: gif.width * gif.height)
        var shown: [[UInt8?]] = []
        for frame in gif.frames {
            let before = screen
            for y in 0..<frame.height {
                for x in 0..<frame.width where Int(frame.index(x, y)) != frame.transparent {
                    screen[(frame.top + y) * gif.width + frame.left + x] = frame.index(x, y)
                }
            }
            shown.append(screen)
            if frame.disposal == 2 {
                for y in 0..<frame.height {
                    for x in 0..<frame.width { screen[(frame.top + y) * gif.width + frame.left + x] = nil }
                }
            } else if frame.disposal == 3 {
                screen = before
            }
        }
        return shown
    }

    /// The same pictures with every frame the whole screen: opaque frames left in place, or,
    /// where some pixels are transparent, each frame cleared before the next. Every frame has the
    /// transparent index, used or not, as the boxes do: libvips then reads both with alpha.
    static func whole(_ gif: HandGIF) -> HandGIF {
        let shown = composed(gif)
        let transparent = shown.contains { $0.contains(nil) }
        let frames = shown.map { screen in
            HandGIF.Frame(width: gif.width, height: gif.height, transparent: Int(hole), disposal: transparent ? 2 : 1) {
                x, y in screen[y * gif.width + x] ?? hole
            }
        }
        return HandGIF(width: gif.width, height: gif.height, palette: gif.palette, frames: frames)
    }

    private func resized(_ gif: HandGIF, _ stage: String, in directory: TemporaryDirectory) async throws
        -> Fixtures.Pixels
    {
        let path = try directory.write("\(UUID().uuidString).gif", gif.bytes)
        return try await TestPipeline.stackedFrames(of: path, frames: Self.frames, through: stage)
    }

    @Test(
        "every frame has the pixels the whole frame gives",
        arguments: [
            (false, "downsample { size = 120 },"),
            (false, #"downsample { size = 120, shrink_on_load = "quality" },"#),
            (false, #"downsample { size = 100, fit = "cover" },"#),
            (false, #"downsample { width = 90, height = 70, fit = "cover", gravity = "south_east" },"#),
            (false, #"downsample { size = 64, fit = "cover", gravity = "attention" },"#),
            (true, "downsample { size = 120 },"),
            (true, #"downsample { size = 100, fit = "cover" },"#),
        ])
    func sameAsWhole(disposals: Bool, stage: String) async throws {
        let directory = try TemporaryDirectory()
        let gif = Self.sparse(disposals: disposals)
        let resizesBefore = ph_frame_change_resizes()
        let byBoxes = try await resized(gif, stage, in: directory)
        #expect(ph_frame_change_resizes() > resizesBefore, "the boxes were not used: \(stage)")
        let byFrames = try await resized(Self.whole(gif), stage, in: directory)
        try #require(
            byBoxes.width == byFrames.width && byBoxes.height == byFrames.height && byBoxes.bands == byFrames.bands)
        let frameHeight = byBoxes.height / Self.frames
        var wrong: [String] = []
        for y in 0..<byBoxes.height {
            for x in 0..<byBoxes.width where byBoxes[x, y] != byFrames[x, y] {
                wrong.append(
                    "(\(x), \(y % frameHeight)) of frame \(y / frameHeight): \(byBoxes[x, y]) not \(byFrames[x, y])")
            }
        }
        #expect(wrong.count == 0, "\(wrong.count) pixels differ, first \(wrong.prefix(3))")
    }

    @Test("a GIF's blocks say which box of each frame changed")
    func changedBoxes() {
        let bytes = Self.sparse(disposals: true).bytes
        var boxes = [VipsRect](repeating: VipsRect(), count: Self.frames)
        let read = bytes.withUnsafeBytes { ph_gif_read_changes($0.baseAddress, $0.count, &boxes, Int32(Self.frames)) }
        #expect(read == Int32(Self.frames))
        #expect(boxes[0].left == 0 && boxes[0].width == Int32(Self.width) && boxes[0].height == Int32(Self.height))
        // Frame 1 is cleared (disposal 2) and frame 2 restored (3): frames 2 and 3 change the
        // box before back as well as their own. Frame 3 is kept (1): frame 4 changes its own.
        let (left1, top1) = Self.corner(1), (left2, top2) = Self.corner(2), (left4, top4) = Self.corner(4)
        #expect(boxes[2].left == Int32(min(left1, left2)) && boxes[2].top == Int32(min(top1, top2)))
        #expect(boxes[2].width == Int32(max(left1, left2) + 8 - min(left1, left2)))
        #expect(boxes[2].height == Int32(max(top1, top2) + 6 - min(top1, top2)))
        #expect(
            boxes[4].left == Int32(left4) && boxes[4].top == Int32(top4) && boxes[4].width == 8 && boxes[4].height == 6)
        // A frame drawn past the screen, a damaged file: nothing is known.
        var past = Self.sparse(disposals: false)
        past.frames[1].left = Self.width - 4
        #expect(past.bytes.withUnsafeBytes { ph_gif_read_changes($0.baseAddress, $0.count, &boxes, 30) } == 0)
        let cut = Array(bytes.prefix(bytes.count / 2))
        #expect(cut.withUnsafeBytes { ph_gif_read_changes($0.baseAddress, $0.count, &boxes, 30) } == 0)
    }
}
