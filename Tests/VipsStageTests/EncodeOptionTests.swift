import PipelineHost
import TestSupport
import Testing

/// encode's options, each shown by what it changes in the bytes or the pixels.
@Suite(
    "encode: effort, lossless, progressive, chroma subsampling, quality per format, jxl", .needs(.pixels))
struct EncodeOptionTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func encode(_ parameters: String, input: [UInt8] = Fixtures.sample, stages: String = "downsample { size = 256 }")
        async throws -> PipelineResult
    {
        let path = try directory.write("input", input)
        return try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, \#(stages), encode { \#(parameters) } }"#, source: path)
    }

    @Test("lossless webp keeps every pixel; lossy does not")
    func lossless() async throws {
        let reference = try await encode(#"format = "png""#)
        let lossless = try await encode(#"format = "webp", lossless = true"#)
        let lossy = try await encode(#"format = "webp", quality = 60"#)
        #expect(Fixtures.difference(reference.bytes.array, lossless.bytes.array)?.max == 0)
        #expect((Fixtures.difference(reference.bytes.array, lossy.bytes.array)?.max ?? 0) > 0)
    }

    @Test("progressive makes a progressive JPEG (SOF2); the default is baseline (SOF0)")
    func progressive() async throws {
        let progressive = try await encode("progressive = true").bytes.array
        let baseline = try await encode("").bytes.array
        func has(_ marker: UInt8, _ bytes: [UInt8]) -> Bool {
            zip(bytes, bytes.dropFirst()).contains { $0 == 0xFF && $1 == marker }
        }
        #expect(has(0xC2, progressive) && !has(0xC0, progressive))
        #expect(has(0xC0, baseline) && !has(0xC2, baseline))
    }

    @Test("chroma_subsampling = \"off\" keeps colour edges sharp: full-resolution chroma in the JPEG")
    func chroma() async throws {
        // JPEG's SOF0 gives each component's sampling factors: 0x22 for subsampled luma, 0x11 without.
        func lumaSampling(_ bytes: [UInt8]) -> UInt8? {
            guard
                let sof = zip(bytes.indices, bytes.dropFirst()).first(where: { bytes[$0.0] == 0xFF && $0.1 == 0xC0 })?.0
            else { return nil }
            return bytes[sof + 11]
        }
        #expect(lumaSampling(try await encode(#"chroma_subsampling = "off""#).bytes.array) == 0x11)
        #expect(lumaSampling(try await encode(#"chroma_subsampling = "on", quality = 95"#).bytes.array) == 0x22)
    }

    @Test("quality per format: webp_quality applies to webp only")
    func qualityPerFormat() async throws {
        let low = try await encode(#"format = "webp", quality = 90, webp_quality = 20"#)
        let high = try await encode(#"format = "webp", quality = 90"#)
        #expect(low.bytes.count * 2 < high.bytes.count)
        let jpeg = try await encode(#"format = "jpeg", quality = 90, webp_quality = 20"#)
        let jpeg90 = try await encode(#"format = "jpeg", quality = 90"#)
        #expect(firstDifference(jpeg.bytes, jpeg90.bytes) == nil)
    }

    @Test("effort trades time for size: the most effort makes a smaller webp")
    func effort() async throws {
        let fast = try await encode(#"format = "webp", effort = 0"#)
        let small = try await encode(#"format = "webp", effort = 9"#)
        #expect(small.bytes.count < fast.bytes.count)
    }

    @Test("AVIF's default effort is 2, not libvips' slower 4; webp's and jxl's are libvips' own")
    func defaultEffort() async throws {
        let avif = try await encode(#"format = "avif""#).bytes.array
        #expect(avif == (try await encode(#"format = "avif", effort = 2"#)).bytes.array)
        #expect(avif != (try await encode(#"format = "avif", effort = 4"#)).bytes.array)
        // webp's method 4 is the profile's effort 6 (fitted to 0-6), jxl's 7 the profile's 7.
        let webp = try await encode(#"format = "webp""#).bytes.array
        #expect(webp == (try await encode(#"format = "webp", effort = 6"#)).bytes.array)
        let jxl = try await encode(#"format = "jxl""#).bytes.array
        #expect(jxl == (try await encode(#"format = "jxl", effort = 7"#)).bytes.array)
    }

    /// libvips 8.14 writes PNG rows unfiltered; with libpng's adaptive filters a photo's PNG is
    /// about a third smaller, and the default (zlib level 4) costs no more CPU than libvips' own.
    @Test("PNG is written with adaptive row filters at zlib level 4 by default; effort 0 filters nothing")
    func pngEffort() async throws {
        let png = try await encode(#"format = "png""#).bytes.array
        #expect(png == (try await encode(#"format = "png", effort = 4"#)).bytes.array)
        let unfiltered = try await encode(#"format = "png", effort = 0"#).bytes.array
        #expect(png.count * 10 < unfiltered.count * 8, "\(png.count) against \(unfiltered.count) bytes unfiltered")
        // The effort is zlib's level: it changes the bytes (not always to fewer: level 9 may
        // lose to 4 on a small photo).
        #expect(png != (try await encode(#"format = "png", effort = 9"#)).bytes.array)
        #expect(Fixtures.decoded(png)?.samples == Fixtures.decoded(unfiltered)?.samples, "lossless either way")
    }

    /// Huffman tables made for the image, as thumbor and imgproxy write: the same pixels in
    /// fewer bytes (2% to a quarter on photos at 512 px).
    @Test("a JPEG gets Huffman tables of its own by default; optimize_coding = false keeps the standard ones")
    func optimizeCoding() async throws {
        let optimized = try await encode(#"format = "jpeg""#).bytes.array
        let standard = try await encode(#"format = "jpeg", optimize_coding = false"#).bytes.array
        #expect(optimized.count < standard.count)
        #expect(Fixtures.decoded(optimized)?.samples == Fixtures.decoded(standard)?.samples, "the same pixels")
    }

    @Test("jxl is written where this libvips can, and reads back")
    func jxl() async throws {
        let result = try await encode(#"format = "jxl", quality = 80"#)
        #expect(result.format == "jxl")
        #expect(result.bytes.array.starts(with: [0xFF, 0x0A]) || result.bytes.array.starts(with: [0, 0, 0, 0x0C]))
    }

    @Test("keep takes only \"icc\"")
    func keepChecked() throws {
        let lua = "profile \"p\" {\n  fetch {}, decode {},\n  encode { keep = { \"exif\" } } }"
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "keep.lua") }
        #expect(
            error?.description.hasPrefix("keep.lua:3:") == true
                && error?.description.contains("takes { \"icc\" }") == true,
            "\(String(describing: error))")
    }
}
