import CVips
import Foundation
import TestSupport
import Testing

/// A GIF made from a GIF keeps each frame's source palette where it still fits the frame, as
/// gifsicle does, and an animation known to be opaque is resized without its alpha. Both read
/// the source's blocks (ph_gif_palettes.c); libvips decodes the pixels, so the tests hold the
/// two readings against each other.
@Suite("A GIF source's palettes and opacity, read from its blocks", .needs(.pixels))
struct GIFSourceTests {
    static let greys: [[UInt8]] = [[0, 0, 0], [90, 90, 90], [180, 180, 180], [250, 250, 250]]

    static func gif(_ frames: [HandGIF.Frame]) -> [UInt8] {
        HandGIF(width: 8, height: 8, palette: greys, frames: frames).bytes
    }

    static let full = HandGIF.Frame(width: 8, height: 8) { x, y in UInt8((x + y) % 4) }
    /// A patch that draws black and white and leaves every other pixel to the frames before.
    static func patch(disposal: Int = 1) -> HandGIF.Frame {
        HandGIF.Frame(left: 2, top: 2, width: 4, height: 4, transparent: 1, disposal: disposal) { x, _ in
            x % 2 == 0 ? 1 : 3
        }
    }

    static let opacityCases: [(String, [UInt8], opaque: Bool, holes: Bool)] = {
        let patched = gif([full, patch(), patch()])
        var cleared = full
        cleared.disposal = 2
        var holed = full
        holed.transparent = 2
        var small = full
        small.width = 4
        var past = patch()
        (past.left, past.top) = (6, 6)
        var own = patch()
        own.palette = [[200, 0, 0], [0, 200, 0], [0, 0, 200], [9, 9, 9]]
        var solidPatch = patch()
        solidPatch.transparent = nil
        // ffmpeg's shape: every frame has a transparent index, the first too, which it never draws.
        let unused = HandGIF.Frame(width: 8, height: 8, transparent: 3) { x, y in UInt8((x + y) % 3) }
        return [
            (
                "a whole first frame with a transparent index it never draws, then patches", gif([unused, patch()]),
                true,
                false
            ),
            ("a whole first frame, then patches with a transparent index", patched, true, false),
            ("a whole first frame, then patches with tables of their own", gif([full, own, patch()]), true, false),
            ("a whole first frame, then opaque patches", gif([full, solidPatch]), true, false),
            ("a transparent index in the first frame", gif([holed]), false, true),
            ("a first frame smaller than the screen", gif([small, patch()]), false, false),
            ("a frame cleared to the background under a patch", gif([cleared, patch()]), false, false),
            ("a frame restored after it is shown", gif([full, patch(disposal: 3), patch()]), false, false),
            ("a frame drawn past the screen", gif([full, past]), false, false),
            ("a file cut short", Array(patched.prefix(patched.count - 12)), false, false),
        ]
    }()

    /// The cases where the blocks leave it to the first frame's pixels: it has a transparent index.
    static let firstFrameDecides: Set = [
        "a whole first frame with a transparent index it never draws, then patches",
        "a transparent index in the first frame",
    ]

    @Test("the blocks call an animation opaque only where libvips composes every frame opaque")
    func opacity() throws {
        for (name, bytes, opaque, holes) in Self.opacityCases {
            #expect(Self.opaque(bytes, frames: 100) == opaque, "\(name)")
            if Self.firstFrameDecides.contains(name) {
                #expect(Self.blocksAnswer(bytes, frames: 100) == PH_GIF_OPAQUE_IF_FIRST_IS, "\(name): no pixel read")
            }
            guard opaque || holes else { continue }
            let frames = try #require(Fixtures.decodedFrames(bytes), "\(name)")
            let alphas =
                frames.bands == 4 ? stride(from: 3, to: frames.samples.count, by: 4).map { frames.samples[$0] } : []
            let (solid, hole) = (alphas.allSatisfy { $0 == 255 }, alphas.contains(0))
            if opaque { #expect(solid, "\(name): libvips shows a hole") }
            if holes { #expect(hole, "\(name): libvips shows no hole, so the case tests nothing") }
        }
    }

    @Test("an opaque animation read with an alpha loses only the alpha: every colour byte stays")
    func alphaDropped() throws {
        let bytes = Fixtures.photoPan(frames: 3, width: 97, height: 41, step: 13)
        let opened = try #require(bytes.withUnsafeBytes { ph_vips_open($0.baseAddress, $0.count, 3) })
        defer { g_object_unref(UnsafeMutableRawPointer(opened)) }
        #expect(vips_image_get_bands(opened) == 4, "libvips read the GIF without an alpha: the case tests nothing")
        var dropped: UnsafeMutablePointer<VipsImage>?
        #expect(ph_vips_drop_alpha(opened, &dropped) == 0)
        let colours = try #require(dropped)
        defer { g_object_unref(UnsafeMutableRawPointer(colours)) }
        var (size, droppedSize) = (0, 0)
        let rgba = try #require(vips_image_write_to_memory(opened, &size))
        defer { g_free(rgba) }
        let rgb = try #require(vips_image_write_to_memory(colours, &droppedSize))
        defer { g_free(rgb) }
        let (all, kept) = (
            UnsafeRawBufferPointer(start: rgba, count: size), UnsafeRawBufferPointer(start: rgb, count: droppedSize)
        )
        var expected = [UInt8]()
        for pixel in 0..<size / 4 { expected += all[pixel * 4..<pixel * 4 + 3] }
        #expect(vips_image_get_bands(colours) == 3 && droppedSize == size / 4 * 3)
        #expect(Array(kept) == expected)
        #expect(vips_image_get_page_height(colours) == vips_image_get_page_height(opened))
    }

    @Test("each frame's palette is its own table where it has one, without the transparent entry")
    func palettes() throws {
        var own = Self.patch()
        own.palette = [[200, 0, 0], [0, 200, 0], [0, 0, 200], [9, 9, 9]]
        let bytes = Self.gif([Self.full, own])
        var read = [ph_gif_palette](repeating: ph_gif_palette(), count: 4)
        let count = read.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBytes { ph_gif_read_palettes($0.baseAddress, $0.count, out.baseAddress, 4, nil) }
        }
        try #require(count == 2)
        #expect(colours(read[0]) == Self.greys)
        #expect(colours(read[1]) == [[200, 0, 0], [0, 0, 200], [9, 9, 9]], "entry 1 is the transparent one")
        #expect(Fixtures.sample.withUnsafeBytes { ph_gif_read_palettes($0.baseAddress, $0.count, &read, 4, nil) } == 0)
    }

    @Test("pixels in the palette's colours keep it exactly; a mark in colours it lacks is quantized afresh")
    func mapping() throws {
        var source = ph_gif_palette()
        let greys: [[UInt8]] = (0..<16).map { level in Array(repeating: UInt8(level * 17), count: 3) }
        setColours(&source, greys)
        // 40 x 40 pixels of the greys, the first row transparent.
        var rgba: [UInt8] = []
        for i in 0..<1600 { rgba += i < 40 ? [0, 0, 0, 0] : greys[i % 16] + [255] }
        let answer = try #require(map(source, rgba), "an exact mapping was refused")
        #expect(answer.colours == 17 && answer.transparent == 16, "a transparent entry past the source's")
        let expected: [UInt8] = (0..<1600).map { i in i < 40 ? 16 : UInt8(i % 16) }
        #expect(answer.index == expected)
        // A red mark on 2 pixels in 1,000 (more than one in a thousand far from every grey).
        for i in stride(from: 800, to: 1600, by: 250) {
            rgba.replaceSubrange(i * 4..<i * 4 + 4, with: [230, 20, 20, 255])
        }
        #expect(map(source, rgba) == nil, "a red mark was mapped to grey")
        #expect(map(source, rgba, limit: 1000) == nil, "a red mark was mapped to grey at a loose limit")
    }

    @Test("a mapping further off than the limit is refused, and kept under a looser one")
    func limit() throws {
        var source = ph_gif_palette()
        let greys: [[UInt8]] = (0..<16).map { level in Array(repeating: UInt8(level * 17), count: 3) }
        setColours(&source, greys)
        // Every pixel 4 from its grey on each channel: a mean squared error of 16, 36 dB.
        let rgba: [UInt8] = (0..<1600).flatMap { i in greys[i % 15].map { $0 + 4 } + [255] }
        #expect(map(source, rgba) == nil, "36 dB kept at the default limit of 40 dB")
        #expect(map(source, rgba, limit: 15.9) == nil)
        let kept = try #require(map(source, rgba, limit: 16))
        #expect(kept.index == (0..<1600).map { UInt8($0 % 15) })
    }

    @Test("a frame of 255 colours or fewer is written in exactly those, though the source's palette is close")
    func exactColours() throws {
        // Two frames of 64 x 32 in odd greys, 64 of them a frame. The source's palette has the
        // even greys, one from each (48 dB): close enough to keep, but not exact.
        let (width, height, frames) = (64, 32, 2)
        var rgb: [UInt8] = []
        for frame in 0..<frames {
            for _ in 0..<height {
                for x in 0..<width { rgb += Array(repeating: UInt8(2 * ((x + frame * 7) % 128) + 1), count: 3) }
            }
        }
        var source = ph_gif_palette()
        setColours(&source, (0..<128).map { Array(repeating: UInt8($0 * 2), count: 3) })
        let firstFrame = (0..<width * height).flatMap { rgb[$0 * 3..<$0 * 3 + 3] + [255] }
        #expect(map(source, firstFrame) != nil, "the source's palette is too far to keep: the test shows nothing")
        let gif = try #require(
            Fixtures.writtenGIF(rgb: rgb, width: width, frameHeight: height, palettes: [source, source]))
        let decoded = try #require(Fixtures.decodedFrames(gif))
        try #require(decoded.width == width && decoded.height == height * frames)
        let changed = (0..<width * height * frames).filter { i in
            !decoded.samples[i * decoded.bands..<i * decoded.bands + 3].elementsEqual(rgb[i * 3..<i * 3 + 3])
        }
        #expect(changed.isEmpty, "\(changed.count) of \(width * height * frames) pixels changed colour")
    }

    @Test("a pixel keeps the colour the frames before show where that is as close as its own palette's")
    func shownColoursKept() throws {
        // Frame 0: 255 colours, written exactly. Frame 1: each pixel's blue 1 or 2 higher (510
        // colours), mapped to a source palette whose blue is 4: 3 or 2 away, where frame 0's
        // colour on screen is 1 or 2 away, so frame 1 leaves every pixel as frame 0 drew it.
        let (width, height) = (64, 32)
        var rgb: [UInt8] = []
        for frame in 0..<2 {
            for i in 0..<width * height {
                let j = UInt8(i % 255)
                rgb += [j, 255 - j, frame == 0 ? 0 : UInt8(1 + i % 2)]
            }
        }
        var source = ph_gif_palette()
        setColours(&source, (0..<255).map { j in [UInt8(j), UInt8(255 - j), 4] })
        let gif = try #require(
            Fixtures.writtenGIF(rgb: rgb, width: width, frameHeight: height, palettes: [source, source]))
        let decoded = try #require(Fixtures.decodedFrames(gif))
        try #require(decoded.width == width && decoded.height == 2 * height)
        let second = (0..<width * height).map { decoded.samples[(width * height + $0) * decoded.bands + 2] }
        #expect(second.allSatisfy { $0 == 0 }, "blues of frame 1: \(Set(second).sorted())")
    }

    @Test("a palette of 256 colours, every one used, gives up its least used for transparency")
    func fullPalette() throws {
        var source = ph_gif_palette()
        let colours: [[UInt8]] = (0..<256).map { c in [UInt8(c), UInt8(255 - c), UInt8(c / 2)] }
        setColours(&source, colours)
        // Every colour on 8 pixels but colour 77 on one; then 4 transparent pixels.
        var pixels: [UInt8] = []
        for c in 0..<256 { pixels += Array(repeating: colours[c] + [255], count: c == 77 ? 1 : 8).joined() }
        pixels += [UInt8](repeating: 0, count: 16)
        let answer = try #require(map(source, pixels))
        #expect(answer.transparent == 77 && answer.colours == 256)
        let count = pixels.count / 4
        #expect(answer.index[count - 4..<count].allSatisfy { $0 == 77 })
        #expect(answer.index[0..<count - 4].allSatisfy { $0 != 77 }, "a pixel kept the entry made transparent")
    }

    @Test("a GIF written again keeps each frame's palette, and a resized one is as close as one quantized afresh")
    func throughThePipeline() async throws {
        let directory = try TemporaryDirectory()
        let pan = Fixtures.photoPan(frames: 6, width: 96, height: 64, step: 24)
        let path = try directory.write("pan.gif", pan)
        let same = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = 10 }, encode { format = "gif" } }"#, source: path)
        let (before, after) = (palettes(pan), palettes(same.bytes.array))
        try #require(before.count == 6 && after.count == 6)
        for k in 0..<6 { #expect(Set(after[k]).subtracting(before[k]).subtracting([[0, 0, 0]]).isEmpty, "frame \(k)") }
        #expect(Fixtures.decodedFrames(same.bytes.array)?.samples == Fixtures.decodedFrames(pan)?.samples)

        let resized = try await resizedGIF(path, size: 48)
        #expect(
            resized.error <= resized.afresh * 1.05 + 0.5, "kept palettes \(resized.error), afresh \(resized.afresh)")
    }

    @Test("a resized pan from a dithered GIF keeps its own palettes, closer than libimagequant's")
    func ditheredPan() async throws {
        // libvips writes the pan as libimagequant dithers it, as ffmpeg's paletteuse does. Across
        // the photo shrunk 4 times, its frames resized map to their own palettes at 38 to 39 dB:
        // under 40 dB, but closer than libimagequant's palettes come (36 to 37 dB).
        let directory = try TemporaryDirectory()
        let frames = 12
        let pan = Fixtures.photoPan(frames: frames, width: 240, height: 160, step: 16, shrink: 4)
        let path = try directory.write("pan.gif", pan)
        let resized = try await resizedGIF(path, size: 100)
        let (before, after) = (palettes(pan), palettes(resized.bytes))
        try #require(before.count == frames && after.count == frames)
        let kept = (0..<frames).filter { k in Set(after[k]).subtracting(before[k]).subtracting([[0, 0, 0]]).isEmpty }
        // Frame 0 is quantized, and its error sets the bar for the rest.
        #expect(kept == Array(1..<frames), "frames kept in their source palettes: \(kept)")
        #expect(resized.error <= resized.afresh, "kept palettes \(resized.error), quantized afresh \(resized.afresh)")
    }

    /// The GIF at `path` resized to `size` as a GIF, with its mean squared error against the
    /// frames resized exactly (lossless WebP), and the error of those frames quantized afresh.
    private func resizedGIF(_ path: String, size: Int) async throws -> (bytes: [UInt8], error: Double, afresh: Double) {
        let resize = "downsample { size = \(size) }"
        let gif = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = 20 }, \#(resize), encode { format = "gif" } }"#, source: path)
        let exact = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = 20 }, \#(resize), encode { format = "webp", lossless = true } }"#,
            source: path)
        let reference = try #require(Fixtures.decodedFrames(exact.bytes.array))
        let afresh = try #require(Fixtures.rewrittenGIF(exact.bytes.array, threads: 1))
        let error = try #require(Fixtures.decodedFrames(gif.bytes.array)?.meanSquaredError(to: reference))
        let quantized = try #require(Fixtures.decodedFrames(afresh)?.meanSquaredError(to: reference))
        return (gif.bytes.array, error, quantized)
    }

    /// The first frame without a transparent index, and with one it never draws (ffmpeg's).
    static let opaqueFirstFrames = [
        HandGIF.Frame(width: 64, height: 48) { x, y in UInt8((x / 8 + y / 6) % 4) },
        HandGIF.Frame(width: 64, height: 48, transparent: 3) { x, y in UInt8((x / 8 + y / 6) % 3) },
    ]

    @Test(
        "an opaque GIF is resized without its alpha, within a level or two of the pixels it gives with its alpha",
        arguments: opaqueFirstFrames.indices)
    func opaqueResize(first: Int) async throws {
        let directory = try TemporaryDirectory()
        let frame = Self.opaqueFirstFrames[first]
        let patch = HandGIF.Frame(left: 8, top: 8, width: 24, height: 16, transparent: 0) { x, _ in x % 3 == 0 ? 0 : 3 }
        // Three different frames: libwebp writes a frame equal to the one before as a longer delay.
        let other = HandGIF.Frame(left: 8, top: 8, width: 24, height: 16, transparent: 0) { x, _ in x % 3 == 1 ? 0 : 3 }
        let bytes = HandGIF(width: 64, height: 48, palette: Self.greys, frames: [frame, patch, other]).bytes
        #expect(Self.opaque(bytes, frames: 3))
        let path = try directory.write("opaque.gif", bytes)
        func run(_ shrink: String, frames: Int, format: String) async throws -> Fixtures.Pixels {
            let result = try await TestPipeline.run(
                """
                profile "p" { fetch {}, decode { frames = \(frames) },
                  downsample { size = 32, shrink_on_load = "\(shrink)" }, encode { format = "\(format)", lossless = true } }
                """, source: path)
            return try #require(Fixtures.decodedFrames(result.bytes.array))
        }
        // libvips resizes the four bands premultiplied, in floats; three bands take its 8-bit
        // path, whose fixed-point passes round each to a level: at this pattern's hard edges,
        // a level or two.
        let (still, stillLibvips) = (
            try await run("speed", frames: 1, format: "png"), try await run("quality", frames: 1, format: "png")
        )
        #expect(still.bands == 3 && stillLibvips.bands == 4, "bands \(still.bands) and \(stillLibvips.bands)")
        let opaque = stride(from: 3, to: stillLibvips.samples.count, by: 4).allSatisfy {
            stillLibvips.samples[$0] == 255
        }
        #expect(opaque)
        let stillError = try #require(still.meanSquaredError(to: stillLibvips))
        #expect(stillError < 4, "mean squared error \(stillError)")
        // Frames are resized down their columns by ph_reducev_frames either way, in 8 bits or
        // premultiplied floats.
        let (frames, framesLibvips) = (
            try await run("speed", frames: 3, format: "webp"), try await run("quality", frames: 3, format: "webp")
        )
        let framesError = try #require(frames.meanSquaredError(to: framesLibvips))
        #expect(
            frames.height == 3 * 24 && framesError < 4, "height \(frames.height), mean squared error \(framesError)")
    }

    // MARK: helpers

    /// Whether the first `frames` frames of `bytes` compose opaque, as decode tells: from the
    /// blocks, and the first frame's pixels where the blocks leave it to them.
    static func opaque(_ bytes: [UInt8], frames: Int) -> Bool {
        let answer = blocksAnswer(bytes, frames: frames)
        return bytes.withUnsafeBytes { ph_gif_composes_opaque($0.baseAddress, $0.count, answer) } == 1
    }

    /// What the blocks alone say: 1, 0 or PH_GIF_OPAQUE_IF_FIRST_IS.
    static func blocksAnswer(_ bytes: [UInt8], frames: Int) -> Int32 {
        var read = [ph_gif_palette](repeating: ph_gif_palette(), count: frames)
        var opaque: Int32 = 0
        _ = read.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBytes {
                ph_gif_read_palettes($0.baseAddress, $0.count, out.baseAddress, Int32(frames), &opaque)
            }
        }
        return opaque
    }

    private func colours(_ palette: ph_gif_palette) -> [[UInt8]] {
        withUnsafeBytes(of: palette.rgb) { rgb in
            (0..<Int(palette.colours)).map { [rgb[$0 * 3], rgb[$0 * 3 + 1], rgb[$0 * 3 + 2]] }
        }
    }

    private func setColours(_ palette: inout ph_gif_palette, _ colours: [[UInt8]]) {
        withUnsafeMutableBytes(of: &palette.rgb) { rgb in
            for (i, colour) in colours.enumerated() { rgb[i * 3..<i * 3 + 3].copyBytes(from: colour) }
        }
        palette.colours = Int32(colours.count)
    }

    private func palettes(_ bytes: [UInt8]) -> [[[UInt8]]] {
        var read = [ph_gif_palette](repeating: ph_gif_palette(), count: 16)
        let count = read.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBytes { ph_gif_read_palettes($0.baseAddress, $0.count, out.baseAddress, 16, nil) }
        }
        return read.prefix(Int(count)).map(colours)
    }

    private struct Mapped: Equatable {
        let index: [UInt8]
        let colours: Int
        let transparent: Int
    }

    /// The mapping of RGBA `pixels` to `source` within `limit`, or nil when it is refused.
    private func map(_ source: ph_gif_palette, _ pixels: [UInt8], limit: Double = PH_GIF_KEEP_ERROR) -> Mapped? {
        var source = source
        var index = [UInt8](repeating: 0, count: pixels.count / 4)
        var palette = [UInt8](repeating: 0, count: 256 * 3)
        var (colours, transparent): (Int32, Int32) = (0, 0)
        let kept = ph_gif_map_to_palette(
            &source, pixels, index.count, limit, &index, &palette, &colours, &transparent)
        return kept == 1 ? Mapped(index: index, colours: Int(colours), transparent: Int(transparent)) : nil
    }
}
