import Foundation
import PipelineHost
import TestSupport
import Testing

/// HEIC, AVIF, TIFF and JPEG XL load where this libvips reads them; BMP and ICO, which it reads
/// only through ImageMagick (blocked), are a clear unsupported_format naming the format.
@Suite("input formats", .needs(.pixels))
struct InputFormatTests {
    let directory: TemporaryDirectory
    let quadrants: String

    init() throws {
        directory = try TemporaryDirectory()
        quadrants = try directory.write("quadrants.png", Fixtures.quadrants(width: 200, height: 100, format: .png))
    }

    func thumbnail(_ bytes: [UInt8], name: String, formats: String = "") async throws -> Fixtures.Pixels {
        let path = try directory.write(name, bytes)
        let decode = formats.isEmpty ? "decode {}" : "decode { formats = \(formats) }"
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, \#(decode), downsample { size = 50 }, encode { format = "png" } }"#,
            source: path)
        return try #require(Fixtures.decoded(result.bytes.array))
    }

    /// The four quadrants survived: red top left, white bottom right (lossy formats within 40).
    static func isQuadrants(_ pixels: Fixtures.Pixels) -> Bool {
        let red = pixels[5, 5], white = pixels[pixels.width - 5, pixels.height - 5]
        return (pixels.width, pixels.height) == (50, 25) && red[0] > 215 && red[1] < 40 && red[2] < 40
            && white.allSatisfy { $0 > 215 }
    }

    @Test("HEIC, AVIF and TIFF load", arguments: ["q.heic", "q.heif[compression=av1]", "q.tif"])
    func loads(_ name: String) async throws {
        let bytes = try #require(
            try await ImageFiles.converted(quadrants, to: name, in: directory), "this libvips cannot write \(name)")
        let pixels = try await thumbnail(bytes, name: "input-" + String(name.prefix { $0 != "[" }))
        #expect(Self.isQuadrants(pixels), "\(name): \(pixels[5, 5]) \(pixels[45, 20])")
    }

    @Test("JPEG XL loads when a profile lists it (its loader is untrusted in this libvips), and not otherwise")
    func jpegXL() async throws {
        let bytes = try #require(try await ImageFiles.converted(quadrants, to: "q.jxl", in: directory))
        let listed = try await thumbnail(bytes, name: "in.jxl", formats: #"{ "jpeg", "png", "jxl" }"#)
        #expect(Self.isQuadrants(listed))
        let path = try directory.write("plain.jxl", bytes)
        let refused = try await TestPipeline.failure(#"profile "p" { fetch {}, decode {}, encode {} }"#, source: path)
        #expect(
            refused?.kind == .unsupportedFormat && refused?.reason.contains("'jxl'") == true,
            "\(String(describing: refused))")
    }

    @Test("BMP and ICO are unsupported_format, named", arguments: ["bmp", "ico"])
    func imageMagickOnly(_ format: String) async throws {
        let bytes =
            format == "bmp"
            ? ImageFiles.bmp(width: 8, height: 4, rgb: [255, 0, 0])
            : ImageFiles.ico(png: Fixtures.quadrants(width: 16, height: 16, format: .png), side: 16)
        let path = try directory.write("file.\(format)", bytes)
        let error = try await TestPipeline.failure(#"profile "p" { fetch {}, decode {}, encode {} }"#, source: path)
        #expect(error?.kind == .unsupportedFormat)
        #expect(
            error?.reason.contains("image format '\(format)' cannot be loaded") == true, "\(String(describing: error))")
    }

    /// Listing magick opens libvips' ImageMagick module for the whole process, so only the
    /// listed case is tested here; CLITests' StartupTests runs the unlisted one in a process of its
    /// own.
    @Test("a file only ImageMagick reads is named as blocked when a profile lists magick")
    func imageMagickListed() async throws {
        let path = try directory.write("file.psd", ImageFiles.psd(width: 4, height: 2, rgb: [0, 128, 255]))
        let listed = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode { formats = { "jpeg", "magick" } }, encode {} }"#, source: path)
        #expect(listed?.kind == .unsupportedFormat)
        #expect(
            listed?.reason == "image format 'magick' is blocked: libvips' magick loader is untrusted",
            "\(String(describing: listed))")
    }
}
