import PipelineHost
import Testing
import TestSupport

@Suite("decode: sniffing and limits")
struct DecodeTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func failure(_ bytes: [UInt8], _ decode: String = "decode {}") async throws -> PipelineError? {
        let path = try directory.write("input", bytes)
        return try await TestPipeline.failure(#"profile "d" { fetch {}, \#(decode), encode {} }"#, source: path)
    }

    @Test("text served as an image is 'not an image', named by its sniffed type", arguments: [
        ("<!DOCTYPE html><html><head><title>Login</title></head></html>", "text/html"),
        (#"<?xml version="1.0" encoding="UTF-8"?><subsonic-response status="failed"><error code="70"/></subsonic-response>"#, "text/xml"),
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

    @Test("animated input gives its first frame by default")
    func firstFrame() async throws {
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: 40))
        let result = try await TestPipeline.run(#"profile "d" { fetch {}, decode {}, encode { format = "webp" } }"#, source: path)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.format, info.width, info.height, info.pages) == ("webp", 16, 16, 1))
    }

    @Test("frames = N keeps an animation, resized frame by frame")
    func keepFrames() async throws {
        let path = try directory.write("anim.gif", Fixtures.animatedGIF(frames: 40, side: 64))
        let lua = #"profile "d" { fetch {}, decode { frames = 5 }, downsample { size = 32 }, encode { format = "webp" } }"#
        let result = try await TestPipeline.run(lua, source: path)
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.width, info.height, info.pages) == (32, 32, 5))
        #expect(result.size == PixelSize(width: 32, height: 32))
    }

    @Test("max_pixels counts every frame decoded")
    func pixelsTimesFrames() async throws {
        let gif = Fixtures.animatedGIF(frames: 10, side: 100)
        let error = try await failure(gif, "decode { frames = 10, max_pixels = 50000 }")
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == "image is 100x100 x 10 frames (0.1 megapixels), over max_pixels (0.1 megapixels)")
        #expect(try await failure(gif, "decode { frames = 1, max_pixels = 50000 }") == nil)
    }
}
