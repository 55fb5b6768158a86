import PipelineHost
import TestSupport
import Testing
import VipsPlugin

/// A suite that writes bytes to a file of its own and runs them through a decode profile.
protocol DecodesFiles {
    var directory: TemporaryDirectory { get }
}

extension DecodesFiles {
    /// The error `bytes` give through fetch, `decode` and encode, or nil when they decode.
    func failure(_ bytes: [UInt8], _ decode: String = "decode {}") async throws -> PipelineError? {
        let path = try directory.write("input", bytes)
        return try await TestPipeline.failure(#"profile "d" { fetch {}, \#(decode), encode {} }"#, source: path)
    }
}

@Suite("decode: sniffing and limits", .needs(.pixels))
struct DecodeTests: DecodesFiles {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test(
        "text served as an image is 'not an image', named by its sniffed type",
        arguments: [
            ("<!DOCTYPE html><html><head><title>Login</title></head></html>", "text/html"),
            (
                #"<?xml version="1.0" encoding="UTF-8"?><subsonic-response status="failed"><error code="70"/></subsonic-response>"#,
                "text/xml"
            ),
            (#"{"error": "not found"}"#, "application/json"),
            ("\u{FEFF}  <svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
        ])
    func text(_ body: String, _ type: String) async throws {
        let error = try await failure(Array(body.utf8))
        #expect(error?.kind == .notAnImage)
        #expect(error?.sniffedType == type)
        #expect(error?.reason == "not an image (\(type))")
    }

    @Test("an empty body is 'not an image'")
    func empty() async throws {
        #expect(try await failure([])?.reason == "not an image (empty body)")
    }

    @Test("random bytes are an unsupported format")
    func random() async throws {
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) | 0x80 }
        #expect(try await failure(noise)?.kind == .unsupportedFormat)
    }

    @Test("max_pixels is checked from the header of a bomb")
    func bomb() async throws {
        let bomb = Fixtures.bombPNG(width: 30000, height: 30000)
        #expect(bomb.count < 100)
        let error = try await failure(bomb)
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == "image is 30000x30000 (900 megapixels), over max_pixels (100 megapixels)")
    }

    @Test("max_pixels comes from the profile")
    func limitFromProfile() async throws {
        let error = try await failure(Fixtures.quadrants(width: 100, height: 100), "decode { max_pixels = 5000 }")
        #expect(error?.kind == .pixelLimit)
    }

    @Test("a truncated JPEG is a decode error, not a grey half")
    func truncated() async throws {
        let whole = Fixtures.quadrants(width: 400, height: 300)
        let error = try await failure(Array(whole.prefix(whole.count / 2)))
        #expect(error?.kind == .decodeFailed)
    }

    @Test("a GIF with thousands of frames is refused from its header")
    func manyFrames() async throws {
        let gif = Fixtures.animatedGIF(frames: 3000)
        let error = try await failure(gif)
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == "image has 3000 frames, over max_frames (1000)")
    }

    @Test("past the default frame limit, an animation keeps its first 250 frames")
    func defaultFrameLimit() async throws {
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: 300))
        let result = try await TestPipeline.run(
            #"profile "d" { fetch {}, decode {}, encode { format = "webp" } }"#, source: path)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.format, info.width, info.height, info.pages) == ("webp", 16, 16, 250))
    }

    @Test("frames = N keeps an animation, resized frame by frame")
    func keepFrames() async throws {
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: 40, side: 64))
        let lua =
            #"profile "d" { fetch {}, decode { frames = 5 }, downsample { size = 32 }, encode { format = "webp" } }"#
        let result = try await TestPipeline.run(lua, source: path)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.width, info.height, info.pages) == (32, 32, 5))
        #expect(result.size == PixelSize(width: 32, height: 32))
    }

    @Test("max_pixels counts every frame decoded: an animation keeps the first frames that fit in it")
    func pixelsTimesFrames() async throws {
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: 10, side: 100))
        let kept = try await TestPipeline.run(
            #"profile "d" { fetch {}, decode { frames = 10, max_pixels = 50000 }, encode { format = "webp" } }"#,
            source: path)
        #expect(Fixtures.info(kept.bytes.array)?.pages == 5, "5 frames of 100x100 fit in 50,000 pixels")
        let error = try await failure(
            Fixtures.animatedGIF(frames: 10, side: 300), "decode { frames = 10, max_pixels = 50000 }")
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == "image is 300x300 a frame (0.1 megapixels), over max_pixels (0.1 megapixels)")
    }
}

@Suite("decode: frame limits for any page count, and the format allowlist", .needs(.pixels))
struct DecodeHardeningTests: DecodesFiles {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test(
        "a TIFF over max_frames is refused from its directory chain, at any page count",
        arguments: [1001, 10_000, 50_000])
    func manyPages(_ pages: Int) async throws {
        let error = try await failure(Fixtures.multiPageTIFF(pages: pages))
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == "image has more than 1000 frames, over max_frames (1000)")
    }

    @Test("a TIFF within max_frames decodes its first page")
    func fewPages() async throws {
        let path = try directory.write("three.tif", Fixtures.multiPageTIFF(pages: 3))
        let result = try await TestPipeline.run(
            #"profile "d" { fetch {}, decode { max_frames = 3 }, encode { format = "png" } }"#, source: path)
        #expect(result.size == PixelSize(width: 1, height: 1))
    }

    // The arguments name the format, not the bytes: a test's log line prints its arguments, and
    // 10,001 frames printed as numbers are megabytes of log.
    @Test(
        "10,000 frames are counted as 10,000, not as libvips' 1",
        arguments: [
            ("tiff", "image has more than 10000 frames, over max_frames (10000)"),
            ("webp", "image has 10001 frames, over max_frames (10000)"),
        ])
    func tenThousandFrames(_ format: String, _ reason: String) async throws {
        let bytes =
            format == "tiff" ? Fixtures.multiPageTIFF(pages: 10_001) : Fixtures.animatedWebP(frames: 10_001, side: 2)
        let error = try await failure(bytes, "decode { max_frames = 10000 }")
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == reason)
    }

    @Test("a GIF with more frames than libvips' GIF loader counts is refused at any max_frames")
    func uncountableGIF() async throws {
        let gif = Fixtures.animatedGIF(frames: 5000, side: 2)
        let error = try await failure(gif, "decode { max_frames = 9999 }")
        #expect(error?.kind == .pixelLimit)
        #expect(
            error?.reason == "image has more than 4096 frames, more than libvips' gif loader counts (max_frames 9999)")
        let limited = try await failure(gif)
        #expect(limited?.reason == "image has more than 4096 frames, over max_frames (1000)", "not libvips' 4097")
    }

    @Test(
        "formats outside the allowlist are unsupported_format, named",
        arguments: [
            (Fixtures.binaryPDF, "pdf"),
            (Fixtures.multiPageTIFF(pages: 1), "tiff"),
        ])
    func notAccepted(_ bytes: [UInt8], _ format: String) async throws {
        let error = try await failure(bytes, #"decode { formats = { "jpeg", "png" } }"#)
        #expect(error?.kind == .unsupportedFormat)
        #expect(error?.reason == "image format '\(format)' is not accepted (decode formats: jpeg, png)")
    }

    @Test("PDF is not accepted by default, and blocked even when listed")
    func pdf() async throws {
        let byDefault = try await failure(Fixtures.binaryPDF)
        #expect(byDefault?.kind == .unsupportedFormat)
        #expect(byDefault?.reason.hasPrefix("image format 'pdf' is not accepted") == true)
        let listed = try await failure(Fixtures.binaryPDF, #"decode { formats = { "jpeg", "pdf" } }"#)
        #expect(listed?.kind == .unsupportedFormat)
        #expect(listed?.reason == "image format 'pdf' is blocked: libvips' pdf loader is untrusted")
    }

    @Test("an unknown format name is a profile error")
    func unknownFormat() throws {
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(#"profile "d" { fetch {}, decode { formats = { "jpeg", "bmp" } }, encode {} }"#)
        }
        #expect(
            error?.message.hasPrefix("decode: formats: 'bmp' is not a libvips loader") == true,
            "\(error?.message ?? "")")
    }
}
