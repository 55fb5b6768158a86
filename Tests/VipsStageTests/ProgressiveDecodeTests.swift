import CVips
import Foundation
import PipelineHost
import TestSupport
import Testing

/// A progressive JPEG shrunk on load to 1/8 is decoded without the AC scans its IDCTs never read
/// (ph_jpeg_scans.c), with the pixels and metadata of the whole-file decode.
@Suite("Progressive JPEGs decoded without the scans their output never reads", .needs(.pixels))
struct ProgressiveDecodeTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// The 2400x1600 sample written progressive by the encode stage, its chroma halved or not.
    private func progressive(chromaSubsampling: String) async throws -> [UInt8] {
        let source = try directory.write("sample-\(chromaSubsampling).jpg", Fixtures.sample)
        let result = try await TestPipeline.run(
            """
            profile "p" { fetch {}, decode {},
              encode { format = "jpeg", quality = 90, progressive = true, chroma_subsampling = "\(chromaSubsampling)", strip = false } }
            """, source: source)
        return result.bytes.array
    }

    /// The image's pixels, its size and bands, and the metadata fields a later stage reads.
    private struct Loaded: Equatable, CustomStringConvertible {
        let width: Int32, height: Int32, bands: Int32
        let pixels: [UInt8]
        let orientation: Int32
        let iccBytes: Int

        /// How many pixel bytes differ from `other`'s.
        func differingBytes(from other: Loaded) -> Int { zip(pixels, other.pixels).count { $0 != $1 } }

        var description: String {
            "\(width)x\(height)x\(bands), orientation \(orientation), \(iccBytes) bytes of ICC, \(pixels.count) pixel bytes"
        }
    }

    private func load(_ bytes: [UInt8], early: Bool) throws -> Loaded? {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = bytes.withUnsafeBytes { buffer in
            early
                ? ph_jpeg_load_needed_scans(buffer.baseAddress, buffer.count, 8, &out)
                : (ph_jpeg_load_whole(buffer.baseAddress, buffer.count, 8, &out) == 0 ? 1 : 0)
        }
        guard status == 1, let image = out else { return nil }
        defer { ph_vips_unref(image) }
        var size = 0
        let memory = try #require(vips_image_write_to_memory(image, &size))
        defer { ph_vips_free(memory) }
        var orientation: Int32 = 1
        if vips_image_get_typeof(image, "orientation") != 0 { vips_image_get_int(image, "orientation", &orientation) }
        var data: UnsafeRawPointer?
        var iccBytes = 0
        if vips_image_get_typeof(image, "icc-profile-data") != 0 {
            vips_image_get_blob(image, "icc-profile-data", &data, &iccBytes)
        }
        return Loaded(
            width: image.pointee.Xsize, height: image.pointee.Ysize, bands: image.pointee.Bands,
            pixels: [UInt8](UnsafeRawBufferPointer(start: memory, count: size)), orientation: orientation,
            iccBytes: iccBytes)
    }

    @Test(
        "at 1/8 the decode leaves scans out, with the pixels of the whole-file decode",
        arguments: ["off", "on"])
    func samePixels(chromaSubsampling: String) async throws {
        let bytes = try await progressive(chromaSubsampling: chromaSubsampling)
        let stopped = ph_jpeg_early_stops()
        let early = try #require(try load(bytes, early: true), "the early path was not taken")
        #expect(ph_jpeg_early_stops() > stopped, "it left no scan out")
        let whole = try #require(try load(bytes, early: false))
        #expect(early.width == 300 && early.height == 200 && early.bands == 3)
        #expect(early == whole, "\(early.differingBytes(from: whole)) bytes differ from libvips' whole-file decode")
    }

    @Test("a file with restart markers in every scan leaves scans out and decodes to the same pixels")
    func restartMarkers() throws {
        // 480x320, 4:2:0, a restart marker every 2 MCUs (libvips' jpegsave restart_interval).
        let path = Fixtures.path("Fuzz/Corpus/decode/progressive-restarts-480.jpg")
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        let stopped = ph_jpeg_early_stops()
        let early = try #require(try load(bytes, early: true))
        #expect(ph_jpeg_early_stops() > stopped)
        let whole = try #require(try load(bytes, early: false))
        #expect(early.width == 60 && early.height == 40)
        #expect(early == whole, "\(early.differingBytes(from: whole)) bytes differ")
    }

    @Test("a placeholder's small copy of a progressive photo leaves scans out too")
    func placeholder() async throws {
        let path = try directory.write("progressive.jpg", try await progressive(chromaSubsampling: "off"))
        let stopped = ph_jpeg_early_stops()
        let hash = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, placeholder { kind = "blurhash" } }"#, source: path)
        #expect(ph_jpeg_early_stops() > stopped, "its small copy read every scan")
        #expect(hash.bytes.count == 28, "a 4x3 BlurHash")
    }

    @Test(
        "a JPEG narrower than the DCT shrink fits its box 1 px wide, baseline or progressive, never an abort",
        arguments: [(4, Fixtures.Format.jpeg), (5, .progressiveJPEG), (7, .jpeg), (9, .progressiveJPEG)])
    func narrowerThanTheShrink(width: Int, format: Fixtures.Format) async throws {
        // 2568 px tall into 48 px would shrink on load by 8; libvips 8.14's jpegload fails an
        // assertion when a side is shorter than that.
        let path = try directory.write(
            "thin-\(width).jpg", Fixtures.quadrants(width: width, height: 2568, format: format))
        let thumbnail = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 48 }, encode { format = "png" } }"#, source: path)
        #expect(thumbnail.size == PixelSize(width: 1, height: 48))
    }

    @Test("EXIF orientation comes through as libvips reads it, and downsample turns the picture upright")
    func orientation() async throws {
        let bytes = Fixtures.quadrants(width: 2400, height: 1600, format: .progressiveJPEG, orientation: 6)
        let early = try #require(try load(bytes, early: true))
        let whole = try #require(try load(bytes, early: false))
        #expect(early == whole, "\(early.differingBytes(from: whole)) bytes differ")
        #expect(early.orientation == 6)
        let thumbnail = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 200 }, encode { format = "png" } }"#,
            source: try directory.write("rotated.jpg", bytes))
        #expect(thumbnail.size == PixelSize(width: 133, height: 200))
    }

    @Test("a progressive file cut short is refused as before, and baseline files and other scales load as usual")
    func normalPathElsewhere() async throws {
        let bytes = try await progressive(chromaSubsampling: "on")
        let cut = Array(bytes.prefix(bytes.count / 2))
        #expect(try load(cut, early: true) == nil, "a file without its end took the early path")
        let path = try directory.write("cut.jpg", cut)
        await #expect(throws: PipelineError.self) {
            try await TestPipeline.run(
                #"profile "p" { fetch {}, decode {}, downsample { size = 250 }, encode { format = "png" } }"#,
                source: path)
        }
        #expect(try load(Fixtures.sample, early: true) == nil, "a baseline file took the early path")
        var out: UnsafeMutablePointer<VipsImage>?
        #expect(bytes.withUnsafeBytes { ph_jpeg_load_needed_scans($0.baseAddress, $0.count, 4, &out) } == 0)
    }
}
