import CVips
import PipelineHost
import TestSupport
import Testing

/// A progressive JPEG's coefficient buffer comes from ph_jpeg_memory.c's allocator, on huge
/// pages and kept for the next decode, and the picture is the same as through malloc.
@Suite("libjpeg's large blocks on huge pages", .needs(.pixels), .serialized)
struct DecoderMemoryTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test(
        "decoding a progressive 2400x1600 JPEG maps its coefficients (7.7 MB) on huge pages, and the next decode reuses them"
    )
    func progressive() async throws {
        let source = try directory.write("sample.jpg", Fixtures.sample)
        let progressive = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, encode { format = "jpeg", quality = 90, progressive = true } }"#,
            source: source)
        let path = try directory.write("progressive.jpg", progressive.bytes.array)
        let (mapped, reused) = (ph_jpeg_huge_blocks(), ph_jpeg_reused_blocks())
        let thumbnail = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 250 }, encode { format = "png" } }"#, source: path)
        #expect(
            ph_jpeg_huge_blocks() + ph_jpeg_reused_blocks() > mapped + reused,
            "libjpeg's jpeg_get_large did not reach ph_jpeg_memory.c")
        // Its blocks are kept: the same decode again maps nothing new.
        let again = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 250 }, encode { format = "png" } }"#, source: path)
        #expect(ph_jpeg_reused_blocks() > reused)
        #expect(firstDifference(again.bytes, thumbnail.bytes) == nil)
        #expect(thumbnail.size == PixelSize(width: 250, height: 167))
        // The baseline original, decoded without any large block, gives the same picture.
        let baseline = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 250 }, encode { format = "png" } }"#,
            source: source)
        let difference = try #require(Fixtures.difference(baseline.bytes.array, thumbnail.bytes.array))
        #expect(difference.meanPerBand.allSatisfy { $0 < 2 }, "\(difference)")
    }
}
