import PipelineHost
import TestSupport
import Testing

/// encode { format = "source" }: one profile answers each input in its own format, as imgproxy
/// does by default, and inputs this libvips cannot write get PNG with alpha, JPEG without.
@Suite("encode format = \"source\"", .needs(.pixels))
struct SourceFormatTests {
    let directory: TemporaryDirectory
    let quadrants: String

    init() throws {
        directory = try TemporaryDirectory()
        quadrants = try directory.write("quadrants.png", Fixtures.quadrants(width: 200, height: 100, format: .png))
    }

    func thumbnail(of name: String, operation: [String] = ["copy"]) async throws -> PipelineResult {
        let bytes = try #require(
            try await ImageFiles.converted(quadrants, to: name, in: directory, operation: operation),
            "this libvips cannot write \(name)")
        let path = try directory.write("input-" + String(name.prefix { $0 != "[" }), bytes)
        return try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 50 }, encode { format = "source" } }"#,
            source: path)
    }

    @Test(
        "jpeg, png, webp, gif and avif come out as they came in",
        arguments: [("q.jpg", "jpeg"), ("q.png", "png"), ("q.webp", "webp"), ("q.gif", "gif"), ("q.avif", "avif")])
    func same(_ name: String, _ format: String) async throws {
        let result = try await thumbnail(of: name)
        #expect(result.format == format)
        #expect(Fixtures.info(result.bytes.array)?.format == (format == "avif" ? "heif" : format))
        #expect(result.size == PixelSize(width: 50, height: 25))
    }

    @Test("a TIFF comes out as JPEG, and as PNG when it has alpha, keeping it")
    func tiff() async throws {
        #expect(try await thumbnail(of: "q.tif").format == "jpeg")
        let withAlpha = try await thumbnail(of: "qa.tif", operation: ["bandjoin_const", "128"])
        #expect(withAlpha.format == "png")
        #expect(try #require(Fixtures.decoded(withAlpha.bytes.array)).bands == 4)
    }
}
