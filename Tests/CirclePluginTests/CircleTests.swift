import PipelineHost
import TestSupport
import Testing

@Suite("circle: round avatars, as a plugin image stage", .needs(.pixels))
struct CircleTests {
    let directory: TemporaryDirectory
    let source: String

    init() throws {
        directory = try TemporaryDirectory()
        source = try directory.write("quadrants.png", Fixtures.quadrants(width: 400, height: 400, format: .png))
    }

    private func avatar(_ circle: String, format: String) async throws -> PipelineResult {
        try await TestPipeline.run(
            """
            profile "avatar" {
              fetch {}, decode {}, downsample { size = 100, fit = "cover" },
              circle { \(circle) },
              encode { format = "\(format)" },
            }
            """, source: source)
    }

    @Test("outside the circle is transparent, inside keeps its colours")
    func transparent() async throws {
        let result = try await avatar("", format: "png")
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.format, info.width, info.height, info.bands) == ("png", 100, 100, 4))
        let pixels = try #require(Fixtures.stats(result.bytes.array))
        #expect(pixels.colourAt(0, 0)[3] == 0)  // a corner: outside
        #expect(pixels.colourAt(0.3, 0.3) == [255, 0, 0, 255])  // inside, in the red quadrant
        #expect(pixels.colourAt(0.7, 0.7) == [255, 255, 255, 255])  // inside, in the white quadrant
    }

    @Test("with a background, corners are filled and a JPEG has no alpha")
    func background() async throws {
        let result = try await avatar(##"background = "#00ff00""##, format: "jpeg")
        let info = try #require(Fixtures.info(result.bytes.array))
        #expect((info.width, info.height, info.bands) == (100, 100, 3))
        let pixels = try #require(Fixtures.stats(result.bytes.array))
        let corner = pixels.colourAt(0.01, 0.99)  // bottom-left: blue quadrant, outside the circle
        #expect(corner[0] < 30 && corner[1] > 225 && corner[2] < 30)
        let inside = pixels.colourAt(0.3, 0.7)  // inside, in the blue quadrant
        #expect(inside[0] < 30 && inside[1] < 30 && inside[2] > 225)
    }

    @Test(
        "its parameters are checked from Lua",
        arguments: [
            (
                #"background = "white""#,
                ##"circle: 'background' must be a colour like "#ffffff" or "#ffffff80", got "white""##
            ),
            (##"colour = "#ffffff""##, "circle: unknown parameter 'colour'"),
        ])
    func parameters(_ circle: String, _ message: String) throws {
        let lua = """
            profile "avatar" {
              fetch {}, decode {},
              circle { \(circle) },
              encode { format = "png" },
            }
            """
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "avatar.lua") }
        #expect(error == ProfileError(file: "avatar.lua", line: 3, message))
    }

    @Test("each frame of an animation gets its own circle, not one circle across the strip of frames")
    func eachFrame() async throws {
        let (info, stacked) = try await TestPipeline.animation(frames: 3, width: 32, height: 32, through: "circle {},")
        #expect(info.pages == 3)
        try #require(stacked.width == 32 && stacked.height == 96 && stacked.bands == 4)
        for frame in 0..<3 {
            #expect(stacked[16, frame * 32 + 16][3] == 255, "frame \(frame)'s centre is inside its circle")
            #expect(stacked[0, frame * 32][3] == 0, "frame \(frame)'s corner is outside")
        }
    }
}
