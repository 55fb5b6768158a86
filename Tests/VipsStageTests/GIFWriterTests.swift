import CVips
import Foundation
import TestSupport
import Testing

/// The GIF writer quantizes frames side by side (ph_gif_save.c). What a user sees must not
/// depend on how many threads did it, and must be at least what libvips' own saver gives.
@Suite("GIF frames are quantized side by side, to the same file", .needs(.pixels))
struct GIFWriterTests {
    /// Nine frames of a pan across the sample photo: nine is a whole batch of none of 2, 4 or 8
    /// threads, so the last batch is a short one.
    static let pan = Fixtures.photoPan(frames: 9, width: 96, height: 64, step: 24)

    @Test("one thread, two, four or eight write the same bytes, every frame in its place")
    func sameFileAnyThreads() throws {
        let one = try #require(Fixtures.rewrittenGIF(Self.pan, threads: 1))
        for threads in [2, 4, 8] {
            let many = try #require(Fixtures.rewrittenGIF(Self.pan, threads: threads))
            #expect(many == one, "\(threads) threads")
        }
        let info = try #require(Fixtures.info(one))
        #expect((info.format, info.pages, info.width, info.height) == ("gif", 9, 96, 64))
    }

    @Test("each frame is as close to its source frame as libvips' own saver makes it, with the same timing")
    func asGoodAsLibvips() throws {
        let timed = Fixtures.animatedGIF(frames: 6, side: 40, delayMs: 70, loop: 3)
        for source in [Self.pan, timed] {
            let ours = try #require(Fixtures.rewrittenGIF(source, threads: 2))
            let theirs = try #require(Fixtures.rewrittenGIF(source, threads: 0))
            let (oursInfo, theirsInfo) = (try #require(Fixtures.info(ours)), try #require(Fixtures.info(theirs)))
            #expect(
                (oursInfo.pages, oursInfo.width, oursInfo.height)
                    == (theirsInfo.pages, theirsInfo.width, theirsInfo.height))
            let (oursTiming, theirsTiming) = (Fixtures.timing(ours), Fixtures.timing(theirs))
            #expect(oursTiming?.delays == theirsTiming?.delays && oursTiming?.loop == theirsTiming?.loop)
            let original = try #require(Fixtures.decodedFrames(source))
            let (oursError, theirsError) = (
                try #require(Fixtures.decodedFrames(ours)?.meanSquaredError(to: original)),
                try #require(Fixtures.decodedFrames(theirs)?.meanSquaredError(to: original))
            )
            // Each frame has a palette of its own, where libvips reuses the last one when it is
            // near enough: never worse, by more than a rounding.
            #expect(oursError <= theirsError * 1.05 + 0.5, "ours \(oursError), libvips' \(theirsError)")
        }
        #expect(
            Fixtures.timing(try #require(Fixtures.rewrittenGIF(timed, threads: 2)))?.delays
                == Array(repeating: 70, count: 6))
    }

    @Test("a hole that opens in one frame and closes in the next shows only in that frame")
    func transparencyPerFrame() throws {
        // Frame 0 red, frame 1 green with a transparent centre, frame 2 blue: the hole must not
        // show frame 0's red (what "unchanged" transparency over an opaque pixel would do), and
        // frame 2 must cover it again.
        let source = Fixtures.animatedGIF(frames: 3, width: 32, height: 32) { frame, x, y in
            let hole = frame == 1 && (12..<20).contains(x) && (12..<20).contains(y)
            return hole ? [0, 0, 0, 0] : [[220, 20, 20, 255], [20, 200, 20, 255], [20, 20, 220, 255]][frame]
        }
        for threads in [1, 2] {
            let written = try #require(Fixtures.rewrittenGIF(source, threads: threads))
            let frames = try #require(Fixtures.decodedFrames(written))
            try #require(frames.bands == 4 && frames.height == 96)
            #expect(frames[16, 16][3] == 255 && frames[16, 16][0] > 150, "frame 0: red, opaque")
            #expect(frames[16, 32 + 16][3] == 0, "frame 1: the hole is clear")
            #expect(frames[2, 32 + 2][1] > 150 && frames[2, 32 + 2][0] < 80, "frame 1: green round the hole")
            #expect(frames[16, 64 + 16][3] == 255 && frames[16, 64 + 16][2] > 150, "frame 2: blue, the hole closed")
        }
    }
}

extension GIFWriterTests {
    @Test(
        "frames of 2, 4 or 128 grey levels, half their pixels unchanged from the frame before, come back exact",
        arguments: [2, 4, 128])
    func fullTables(colours: Int) throws {
        // Each frame shows `colours` grey levels in columns: in the top half they shift by one
        // from frame to frame, in the bottom half they stay, so those pixels are written as
        // "unchanged".
        func level(_ frame: Int, _ x: Int, _ y: Int) -> UInt8 {
            UInt8((x / (128 / colours) + (y < 4 ? frame : 0)) % colours * (255 / max(1, colours - 1)))
        }
        let source = Fixtures.animatedGIF(frames: 4, width: 128, height: 8) { frame, x, y in
            [level(frame, x, y), level(frame, x, y), level(frame, x, y)]
        }
        for threads in [1, 2] {
            let written = try #require(Fixtures.rewrittenGIF(source, threads: threads))
            let frames = try #require(Fixtures.decodedFrames(written))
            try #require(frames.width == 128 && frames.height == 32)
            let wrong = (0..<32).flatMap { y in (0..<128).map { (x: $0, y: y) } }.filter { at in
                abs(Int(frames[at.x, at.y][0]) - Int(level(at.y / 8, at.x, at.y % 8))) > 1
            }
            #expect(
                wrong.isEmpty,
                "\(threads) threads: \(wrong.count) pixels wrong, first \(wrong.first.map { "\($0)" } ?? "")")
        }
    }
}

extension GIFWriterTests {
    @Test(
        "a patch that changes over a still of many colours gets a palette of its own, and a frame that repeats the one before comes back the same",
        arguments: [1, 2])
    func changedPixelsQuantizedAlone(threads: Int) throws {
        // The still: a field of thousands of colours. Frames 1 and 2 show the same 16 x 16 patch
        // of 256 colours of its own, frame 3 another one elsewhere. Quantizing a whole frame
        // would share 255 colours between the still and the patch; quantizing what changed gives
        // the patch its own.
        let patchAt = [1: (x: 24, y: 16), 2: (x: 24, y: 16), 3: (x: 80, y: 56)]
        let source = Fixtures.animatedGIF(frames: 4, width: 128, height: 96) { frame, x, y in
            if let at = patchAt[frame], (at.x..<at.x + 16).contains(x), (at.y..<at.y + 16).contains(y) {
                let (u, v) = (x - at.x, y - at.y)
                return frame == 3
                    ? [UInt8(u * 16), UInt8(255 - v * 16), UInt8(128 + (u - v) * 7)]
                    : [UInt8(255 - v * 16), UInt8(40 + u * 13), UInt8(u * v)]
            }
            return [UInt8(x * 2), UInt8(y * 2 + 40), UInt8(255 - x - y)]
        }
        let original = try #require(Fixtures.decodedFrames(source))
        let written = try #require(Fixtures.rewrittenGIF(source, threads: threads))
        let frames = try #require(Fixtures.decodedFrames(written))
        try #require(frames.width == 128 && frames.height == 4 * 96)
        func patchError(_ frame: Int) -> Double {
            let at = patchAt[frame]!
            var sum = 0.0
            for y in at.y..<at.y + 16 {
                for x in at.x..<at.x + 16 {
                    for band in 0..<3 {
                        let d =
                            Double(frames[x, frame * 96 + y][band]) - Double(original[x, frame * 96 + y][band])
                        sum += d * d
                    }
                }
            }
            return sum / Double(3 * 16 * 16)
        }
        for frame in [1, 3] {
            #expect(patchError(frame) < 1, "frame \(frame), \(threads) threads: \(patchError(frame))")
        }
        let same = (0..<96).allSatisfy { y in
            (0..<128).allSatisfy { x in frames[x, 96 + y] == frames[x, 2 * 96 + y] }
        }
        #expect(same, "\(threads) threads: frame 2 repeats frame 1")
        #expect(try #require(frames.meanSquaredError(to: original)) < 20, "\(threads) threads")
    }
}

extension GIFWriterTests {
    /// Each frame's colour table as written, the transparent entry left out.
    static func tables(_ bytes: [UInt8], frames: Int) throws -> [[[UInt8]]] {
        var read = [ph_gif_palette](repeating: ph_gif_palette(), count: frames)
        let count = read.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBytes {
                ph_gif_read_palettes($0.baseAddress, $0.count, out.baseAddress, Int32(frames), nil)
            }
        }
        try #require(count == frames)
        return read.map { palette in
            withUnsafeBytes(of: palette.rgb) { rgb in
                (0..<Int(palette.colours)).map { [rgb[$0 * 3], rgb[$0 * 3 + 1], rgb[$0 * 3 + 2]] }
            }
        }
    }

    /// Each frame's mean squared error against the same frame of `original`.
    static func frameErrors(_ frames: Fixtures.Pixels, _ original: Fixtures.Pixels, count: Int) -> [Double] {
        let height = frames.height / count
        return (0..<count).map { frame in
            var sum = 0.0
            for y in frame * height..<(frame + 1) * height {
                for x in 0..<frames.width {
                    for band in 0..<3 {
                        let d = Double(frames[x, y][band]) - Double(original[x, y][band])
                        sum += d * d
                    }
                }
            }
            return sum / Double(3 * frames.width * height)
        }
    }

    @Test(
        "a frame the palette of four frames before still fits is remapped to it, at most a quarter worse than libvips' fresh palette"
    )
    func alikeFramesShareAPalette() throws {
        // A slow pan (2 px a frame) across the sample photo shrunk 8 times, in WebP (a GIF's
        // frames would be written in exactly their own colours, which are 256 at most): frames
        // four apart share nearly all their colours. The bound is a quarter over libvips' error
        // plus 1: the reuse limit is a quarter over the chain's own fresh palette's.
        let pan = Fixtures.photoPan(frames: 16, width: 96, height: 64, step: 2, webp: true, shrink: 8)
        let original = try #require(Fixtures.decodedFrames(pan))
        let ours = try #require(Fixtures.rewrittenGIF(pan, threads: 2))
        let tables = try Self.tables(ours, frames: 16)
        let shared = (4..<16).filter { tables[$0] == tables[$0 - 4] }
        #expect(shared.count >= 6, "frames with the table of four before: \(shared)")
        for threads in [1, 3, 8] {
            #expect(
                Fixtures.rewrittenGIF(pan, threads: threads) == ours, "\(threads) threads: the chains are the frames'")
        }
        let theirs = try #require(Fixtures.rewrittenGIF(pan, threads: 0))
        let oursErrors = Self.frameErrors(try #require(Fixtures.decodedFrames(ours)), original, count: 16)
        let theirsErrors = Self.frameErrors(try #require(Fixtures.decodedFrames(theirs)), original, count: 16)
        for frame in shared {
            #expect(
                oursErrors[frame] <= theirsErrors[frame] * 1.25 + 1,
                "frame \(frame): ours \(oursErrors[frame]), libvips' \(theirsErrors[frame])")
        }
    }

    @Test("frames of other colours each get a palette of their own")
    func unlikeFramesDoNot() throws {
        // Eight frames of the sample photo, each tinted a hue of its own: no palette fits a
        // later frame. WebP, so each frame has more colours than a palette holds.
        let photo = try #require(Fixtures.decoded(Fixtures.sample))
        let source = Fixtures.animatedWebP(frames: 8, width: 64, height: 48) { frame, x, y in
            let hue = [
                [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1], [1, 0.5, 0],
            ][frame]
            return zip(hue, photo[x * 2, y * 2]).map { UInt8(10 + Double($1) * (0.2 + 0.7 * $0)) }
        }
        let ours = try #require(Fixtures.rewrittenGIF(source, threads: 2))
        let tables = try Self.tables(ours, frames: 8)
        #expect((4..<8).allSatisfy { tables[$0] != tables[$0 - 4] })
        let original = try #require(Fixtures.decodedFrames(source))
        let errors = Self.frameErrors(try #require(Fixtures.decodedFrames(ours)), original, count: 8)
        #expect(errors.allSatisfy { $0 < 4 }, "\(errors)")
    }
}
