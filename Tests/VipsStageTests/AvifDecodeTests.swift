import CVips
import Foundation
import PipelineHost
import TestSupport
import Testing

/// downsample's speed path reads a still 8-bit AVIF through libavif instead of libvips' heifload
/// (ph_avif_load.c), keeping heifload's header and metadata; anything libavif should not read
/// goes to heifload as before.
@Suite("AVIF read through libavif, with heifload's size and metadata", .needs(.pixels))
struct AvifDecodeTests {
    let directory: TemporaryDirectory
    let small: String

    init() async throws {
        directory = try TemporaryDirectory()
        _ = try #require(
            try await ImageFiles.converted(
                Fixtures.path("examples/sample.jpg"), to: "small.png", in: directory, operation: ["thumbnail", "480"]))
        small = directory.file("small.png")
    }

    /// A 480x320 AVIF of the sample, tagged Display-P3 by `vips icc_export`, or as it is.
    private func avif(_ name: String, p3: Bool) async throws -> [UInt8] {
        let operation = p3 ? ["icc_export", "--output-profile", "p3"] : ["copy"]
        return try #require(
            try await ImageFiles.converted(small, to: name + "[effort=0]", in: directory, operation: operation))
    }

    /// A 240 px fit of `bytes` through downsample's speed path (`draft`) or libvips' thumbnail.
    private func thumbnail(_ bytes: [UInt8], draft: Bool) throws -> Thumbnail {
        var out: UnsafeMutablePointer<VipsImage>?
        let crop = ph_crop(mode: PH_CROP_NONE, x: 0.5, y: 0.5)
        let mark = ph_vips_error_mark()
        let status = bytes.withUnsafeBytes { buffer in
            (draft ? ph_vips_thumbnail_buffer_draft : ph_vips_thumbnail_buffer)(
                buffer.baseAddress, buffer.count, 240, 240, crop, 0, 1, &out)
        }
        guard status == 0, let image = out else {
            let message = ph_vips_errors_since(mark)
            defer { ph_vips_free(message) }
            throw VipsFailure(message: message.map { String(cString: $0) } ?? "")
        }
        defer { ph_vips_unref(image) }
        var size = 0
        let memory = try #require(vips_image_write_to_memory(image, &size))
        defer { ph_vips_free(memory) }
        var data: UnsafeRawPointer?
        var length = 0
        var icc: [UInt8] = []
        if vips_image_get_typeof(image, "icc-profile-data") != 0,
            vips_image_get_blob(image, "icc-profile-data", &data, &length) == 0, let data
        {
            icc = [UInt8](UnsafeRawBufferPointer(start: data, count: length))
        }
        return Thumbnail(
            width: Int(image.pointee.Xsize), height: Int(image.pointee.Ysize), bands: Int(image.pointee.Bands),
            pixels: [UInt8](UnsafeRawBufferPointer(start: memory, count: size)), icc: icc)
    }

    private struct Thumbnail {
        let width: Int, height: Int, bands: Int
        let pixels: [UInt8]
        let icc: [UInt8]

        /// The largest and the mean difference of a sample from `other`'s.
        func difference(from other: Thumbnail) -> (largest: Int, mean: Double) {
            let differences = zip(pixels, other.pixels).map { abs(Int($0) - Int($1)) }
            return (differences.max() ?? 0, Double(differences.reduce(0, +)) / Double(max(1, differences.count)))
        }
    }

    private struct VipsFailure: Error { let message: String }

    @Test("a Display-P3 AVIF reads through libavif, with heifload's size, profile and pixels to YUV rounding")
    func sameAsHeifload() async throws {
        let bytes = try await avif("p3.avif", p3: true)
        let reference = try thumbnail(bytes, draft: false)
        #expect(reference.icc.count > 0, "the fixture carries no profile")
        // Several reads: each frees libvips' header before the pixels are used, so a profile
        // still pointing into the header's memory would come out changed in at least one.
        for _ in 0..<8 {
            let before = ph_avif_libavif_decodes()
            let read = try thumbnail(bytes, draft: true)
            #expect(ph_avif_libavif_decodes() > before, "libavif did not read it")
            #expect(read.width == 240 && read.height == 160 && read.bands == 3)
            let sameProfile = read.icc == reference.icc
            #expect(sameProfile, "the profile (\(read.icc.count) bytes) is not heifload's")
            // libyuv converts YUV to RGB with 6-bit coefficients, libheif in wider integers.
            let difference = read.difference(from: reference)
            #expect(difference.largest <= 12 && difference.mean < 1, "\(difference) from heifload's pixels")
        }
    }

    @Test("an AVIF with alpha keeps four bands through libavif")
    func alpha() async throws {
        let translucent = try directory.write(
            "alpha.png", Fixtures.painted(width: 96, height: 64, alpha: true) { x, _ in [200, 60, 40, UInt8(x * 2)] })
        let bytes = try #require(
            try await ImageFiles.converted(translucent, to: "alpha.avif[effort=0]", in: directory))
        let before = ph_avif_libavif_decodes()
        let read = try thumbnail(bytes, draft: true)
        #expect(ph_avif_libavif_decodes() > before, "libavif did not read it")
        let reference = try thumbnail(bytes, draft: false)
        #expect(read.bands == 4 && reference.bands == 4)
        #expect(read.difference(from: reference).largest <= 12)
    }

    @Test("a truncated AVIF is refused on both paths, and libavif leaves it to heifload")
    func truncated() async throws {
        let bytes = try await avif("whole.avif", p3: false)
        let half = Array(bytes.prefix(bytes.count / 2))
        #expect(throws: VipsFailure.self) { try thumbnail(half, draft: true) }
        #expect(throws: VipsFailure.self) { try thumbnail(half, draft: false) }
        // Asked directly, not through the process-wide count, which tests running beside this
        // one move.
        var out: UnsafeMutablePointer<VipsImage>?
        let taken = half.withUnsafeBytes { ph_avif_load($0.baseAddress, $0.count, &out) }
        #expect(taken == 0 && out == nil, "libavif took a truncated file")
    }

    @Test("through the pipeline, a fitted AVIF comes out in the colour heifload's read gives")
    func pipeline() async throws {
        let path = try directory.write("p3-pipeline.avif", try await avif("p3-pipeline-source.avif", p3: true))
        let before = ph_avif_libavif_decodes()
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 240 }, encode { format = "png" } }"#, source: path)
        #expect(ph_avif_libavif_decodes() > before)
        let quality = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 240, shrink_on_load = "quality" }, encode { format = "png" } }"#,
            source: path)
        let fast = try #require(Fixtures.decoded(result.bytes.array))
        let exact = try #require(Fixtures.decoded(quality.bytes.array))
        #expect(fast.width == exact.width && fast.height == exact.height)
        let differences = zip(fast.samples, exact.samples).map { abs(Int($0) - Int($1)) }
        let mean = Double(differences.reduce(0, +)) / Double(differences.count)
        #expect(mean < 1, "mean difference \(mean) from heifload's colour")
    }
}
