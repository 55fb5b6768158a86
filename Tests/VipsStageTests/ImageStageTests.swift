import PipelineHost
import TestSupport
import Testing

@Suite("downsample, blur and encode", .needs(.pixels))
struct ImageStageTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func run(_ stages: String, input: [UInt8]) async throws -> PipelineResult {
        let path = try directory.write("input", input)
        return try await TestPipeline.run(#"profile "p" { fetch {}, decode {}, \#(stages) }"#, source: path)
    }

    @Test(
        "cover crops to the exact box; inside keeps the aspect ratio",
        arguments: [
            ("size = 300, fit = \"cover\"", 300, 300),
            ("size = 300", 300, 200),
            ("width = 120", 120, 80),
            ("height = 50", 75, 50),
            ("width = 100, height = 100, fit = \"cover\"", 100, 100),
        ])
    func sizes(_ parameters: String, _ width: Int, _ height: Int) async throws {
        let result = try await run("downsample { \(parameters) }, encode {}", input: Fixtures.sample)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.width, info.height) == (width, height))
        #expect(result.size == PixelSize(width: width, height: height))
        #expect(result.sourceSize == PixelSize(width: 2400, height: 1600))
    }

    @Test("small images are not enlarged unless asked")
    func enlarge() async throws {
        let small = Fixtures.quadrants(width: 60, height: 40)
        #expect(
            try await run("downsample { size = 300 }, encode {}", input: small).size == PixelSize(width: 60, height: 40)
        )
        #expect(
            try await run("downsample { size = 300, enlarge = true }, encode {}", input: small).size
                == PixelSize(width: 300, height: 200))
    }

    @Test("EXIF orientation is honoured, with or without downsample", arguments: [true, false])
    func orientation(downsample: Bool) async throws {
        // Stored 400x200 with orientation 6 (rotate 90° clockwise to display): upright it is 200x400,
        // and the red top-left quadrant ends up top-right.
        let rotated = Fixtures.quadrants(width: 400, height: 200, orientation: 6)
        #expect(Fixtures.info(rotated)?.hasEXIF == true)
        let stages =
            downsample ? "downsample { size = 100 }, encode { format = \"png\" }" : "encode { format = \"png\" }"
        let result = try await run(stages, input: rotated)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect(info.width * 2 == info.height)
        let stats = try #require(Fixtures.stats(result.bytes.array))
        let topRight = stats.colourAt(0.9, 0.1)
        #expect(topRight[0] > 200 && topRight[1] < 60 && topRight[2] < 60, "top-right should be red, is \(topRight)")
    }

    @Test(
        "a large JPEG stored turned is turned upright without downsample too (its loader reads top to bottom once)",
        arguments: [(3, 0.9, 0.9), (6, 0.9, 0.1), (8, 0.1, 0.9)])
    func largeTurned(orientation: Int, redX: Double, redY: Double) async throws {
        let stored = Fixtures.quadrants(width: 2400, height: 1200, orientation: orientation)
        let result = try await run("blur { sigma = 1 }, encode { format = \"png\" }", input: stored)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect(orientation == 3 ? info.width == 2400 : info.height == 2400)
        let red = try #require(Fixtures.stats(result.bytes.array)).colourAt(redX, redY)
        #expect(red[0] > 200 && red[1] < 60 && red[2] < 60, "the red quadrant, at (\(redX), \(redY)), is \(red)")
    }

    @Test(
        "shrink_on_load = \"speed\" (the default) gives the same picture as libvips' choice (\"quality\"), orientation included",
        arguments: [("cover", 1), ("inside", 1), ("cover", 6)])
    func draftShrink(fit: String, orientation: Int) async throws {
        let photo =
            orientation == 1 ? Fixtures.sample : Fixtures.quadrants(width: 1600, height: 900, orientation: orientation)
        let quality = try await run(
            "downsample { size = 120, fit = \"\(fit)\", shrink_on_load = \"quality\" }, encode { format = \"png\" }",
            input: photo)
        let speed = try await run(
            "downsample { size = 120, fit = \"\(fit)\", shrink_on_load = \"speed\" }, encode { format = \"png\" }",
            input: photo)
        #expect(speed.size == quality.size)
        let difference = try #require(Fixtures.difference(quality.bytes.array, speed.bytes.array))
        #expect(difference.meanPerBand.allSatisfy { $0 < 2 }, "\(difference)")
        // A PNG has no JPEG scales: the same path as libvips' own.
        let png = Fixtures.quadrants(width: 800, height: 600, format: .png)
        let fromPNG = try await run(
            "downsample { size = 100, shrink_on_load = \"speed\" }, encode { format = \"png\" }", input: png)
        #expect(fromPNG.size == PixelSize(width: 100, height: 75))
    }

    @Test("the default shrink-on-load is \"speed\": a 2400x1600 JPEG to 300 is decoded at 1/8, not 1/4")
    func defaultShrink() async throws {
        let png = "encode { format = \"png\" }"
        let byDefault = try await run("downsample { size = 300 }, \(png)", input: Fixtures.sample)
        let speed = try await run(
            "downsample { size = 300, shrink_on_load = \"speed\" }, \(png)", input: Fixtures.sample)
        let quality = try await run(
            "downsample { size = 300, shrink_on_load = \"quality\" }, \(png)", input: Fixtures.sample)
        #expect(firstDifference(byDefault.bytes, speed.bytes) == nil)
        #expect(byDefault.bytes.array != quality.bytes.array)
    }

    @Test("blur softens the image and dim darkens it")
    func blurAndDim() async throws {
        let plain = try await run("downsample { size = 256 }, encode { format = \"png\" }", input: Fixtures.sample)
        let blurred = try await run(
            "downsample { size = 256 }, blur { sigma = 8 }, encode { format = \"png\" }", input: Fixtures.sample)
        let dimmed = try await run(
            "downsample { size = 256 }, blur { sigma = 8, dim = 0.5 }, encode { format = \"png\" }",
            input: Fixtures.sample)
        let p = try #require(Fixtures.stats(plain.bytes.array))
        let b = try #require(Fixtures.stats(blurred.bytes.array))
        let d = try #require(Fixtures.stats(dimmed.bytes.array))
        #expect(b.sharpness < p.sharpness / 2)
        #expect(abs(b.mean - p.mean) < 3)
        #expect(abs(d.mean - b.mean * 0.5) < 2)
    }

    @Test("dim darkens a blur scaled up by size as much as one that is not scaled")
    func dimScaled() async throws {
        // The blur is dimmed at its own size, before the scale: the same look for fewer pixels.
        let blurred = try await run(
            "downsample { size = 64 }, blur { sigma = 8, size = 256 }, encode { format = \"png\" }",
            input: Fixtures.sample)
        let dimmed = try await run(
            "downsample { size = 64 }, blur { sigma = 8, dim = 0.5, size = 256 }, encode { format = \"png\" }",
            input: Fixtures.sample)
        #expect(dimmed.size == PixelSize(width: 256, height: 171))
        let b = try #require(Fixtures.stats(blurred.bytes.array))
        let d = try #require(Fixtures.stats(dimmed.bytes.array))
        #expect(abs(d.mean - b.mean * 0.5) < 1)
        #expect(d.sharpness < b.sharpness)
    }

    @Test("blur works straight after decode too")
    func blurWithoutDownsample() async throws {
        let result = try await run("blur { sigma = 2 }, encode {}", input: Fixtures.quadrants(width: 80, height: 60))
        #expect(result.size == PixelSize(width: 80, height: 60))
    }

    @Test("each format encodes to what it says", arguments: ["jpeg", "png", "webp", "gif"])
    func formats(_ format: String) async throws {
        let result = try await run(
            "downsample { size = 64 }, encode { format = \"\(format)\" }", input: Fixtures.sample)
        #expect(result.format == format)
        #expect(Fixtures.info(result.bytes.array)?.format == format)
    }

    @Test("metadata is stripped by default and kept on request")
    func strip() async throws {
        let tagged = Fixtures.quadrants(width: 200, height: 100, orientation: 1)
        let stripped = try await run("encode {}", input: tagged)
        let kept = try await run("encode { strip = false }", input: tagged)
        #expect(Fixtures.info(stripped.bytes.array)?.hasEXIF == false)
        #expect(Fixtures.info(kept.bytes.array)?.hasEXIF == true)
    }

    /// libvips 8.14 writes an EXIF chunk into every WebP, stripped or not (about 200 bytes of a
    /// few-KB answer); encode takes it out, with the extended header that only it needed.
    @Test("a stripped WebP carries the picture alone; strip = false keeps its EXIF")
    func strippedWebP() async throws {
        let tagged = Fixtures.quadrants(width: 200, height: 100, orientation: 1)
        let stripped = try await run(#"encode { format = "webp" }"#, input: tagged)
        #expect(Self.chunks(stripped.bytes.array) == ["VP8 "])
        #expect(Fixtures.info(stripped.bytes.array)?.format == "webp")
        let kept = try await run(#"encode { format = "webp", strip = false }"#, input: tagged)
        #expect(Self.chunks(kept.bytes.array).contains("EXIF"))
    }

    /// The chunk names of a RIFF WebP, in order.
    static func chunks(_ bytes: [UInt8]) -> [String] {
        var names: [String] = []
        var at = 12
        while at + 8 <= bytes.count {
            names.append(String(decoding: bytes[at..<at + 4], as: UTF8.self))
            let size =
                Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            at += 8 + size + (size & 1)
        }
        return names
    }

    @Test("quality changes the JPEG size")
    func quality() async throws {
        let low = try await run("downsample { size = 400 }, encode { quality = 20 }", input: Fixtures.sample)
        let high = try await run("downsample { size = 400 }, encode { quality = 95 }", input: Fixtures.sample)
        #expect(low.bytes.count < high.bytes.count / 2)
    }

    @Test("a saver's own failure is encode_failed; a source that breaks while encoding is decode_failed")
    func encodeFailureByPlace() async throws {
        // WebP cannot hold a side over 16383 pixels: libvips' saver refuses, the input is fine.
        let wide = try directory.write("wide.png", Fixtures.quadrants(width: 20000, height: 2, format: .png))
        let saver = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "webp" } }"#, source: wide)
        #expect(saver?.kind == .encodeFailed)
        #expect(saver?.reason.hasPrefix("encode failed:") == true)
        // Decoding is lazy: a truncated JPEG fails only when encode asks for its pixels.
        let whole = Fixtures.quadrants(width: 400, height: 300)
        let cut = try directory.write("cut.jpg", Array(whole.prefix(whole.count / 2)))
        let source = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "webp" } }"#, source: cut)
        #expect(source?.kind == .decodeFailed)
        #expect(source?.reason.hasPrefix("decode failed:") == true)
    }

    @Test(
        "the blur looks like an exact full-resolution Gaussian: within 2/255 per band on average",
        arguments: [4.0, 12.0, 30.0])
    func blurLook(sigma: Double) async throws {
        let downsampled = try await run(
            #"downsample { size = 512 }, encode { format = "png" }"#, input: Fixtures.sample)
        let blurred = try await run(
            #"downsample { size = 512 }, blur { sigma = \#(sigma) }, encode { format = "png" }"#, input: Fixtures.sample
        )
        let exact = try #require(Fixtures.exactBlur(downsampled.bytes.array, sigma: sigma))
        let difference = try #require(Fixtures.difference(blurred.bytes.array, exact))
        print(
            "blur sigma \(sigma): mean absolute difference per band \(difference.meanPerBand.map { ($0 * 100).rounded() / 100 }), max \(difference.max)"
        )
        #expect(
            difference.meanPerBand.allSatisfy { $0 <= 2 },
            "mean per band \(difference.meanPerBand), max \(difference.max)")
        #expect(difference.max <= 16, "no visible seam or shift")
    }

    @Test("blurring a quarter-size image and scaling it up (blur's size) looks like the full-size blur")
    func blurSmallThenScale() async throws {
        let downsampled = try await run(
            #"downsample { size = 512 }, encode { format = "png" }"#, input: Fixtures.sample)
        let small = try await run(
            #"downsample { size = 128 }, blur { sigma = 12, size = 512 }, encode { format = "png" }"#,
            input: Fixtures.sample)
        #expect(small.size?.width == 512)
        let exact = try #require(Fixtures.exactBlur(downsampled.bytes.array, sigma: 12))
        let difference = try #require(Fixtures.difference(small.bytes.array, exact))
        print(
            "blur at 128 px scaled to 512: mean absolute difference per band \(difference.meanPerBand.map { ($0 * 100).rounded() / 100 }), max \(difference.max)"
        )
        #expect(
            difference.meanPerBand.allSatisfy { $0 <= 2 },
            "mean per band \(difference.meanPerBand), max \(difference.max)")
    }
}
