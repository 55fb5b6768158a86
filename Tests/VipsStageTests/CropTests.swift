import PipelineHost
import TestSupport
import Testing

/// Where downsample's cover crop lands (gravity, focus, libvips' smartcrop), contain's padding
/// and dpr, each checked by pixels.
@Suite("downsample: gravity, focus, contain and dpr", .needs(.pixels))
struct CropTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func run(_ stages: String, input: [UInt8]) async throws -> Fixtures.Pixels {
        try await TestPipeline.pixels(after: stages, input: input, in: directory)
    }

    /// Mid grey, with a saturated orange square near the right edge (x 650-770 of 800).
    static let objectAtTheRight = Fixtures.painted(width: 800, height: 400) { x, y in
        (650..<770).contains(x) && (140..<260).contains(y) ? [250, 120, 20] : [100, 100, 100]
    }

    /// Pixels of the orange object in an image.
    static func orange(_ pixels: Fixtures.Pixels) -> Int {
        var count = 0
        for y in 0..<pixels.height {
            for x in 0..<pixels.width where pixels[x, y][0] > 200 && pixels[x, y][2] < 80 { count += 1 }
        }
        return count
    }

    @Test("an attention crop keeps a bright object that a centre crop cuts off")
    func attention() async throws {
        let centre = try await run(##"downsample { size = 200, fit = "cover" }"##, input: Self.objectAtTheRight)
        let attention = try await run(
            ##"downsample { size = 200, fit = "cover", gravity = "attention" }"##, input: Self.objectAtTheRight)
        #expect((centre.width, centre.height) == (200, 200) && (attention.width, attention.height) == (200, 200))
        #expect(Self.orange(centre) == 0, "the centre crop (x 100-300 of the 400-wide scaled image) misses it")
        #expect(Self.orange(attention) > 3000, "the whole 60x60 object is kept: \(Self.orange(attention))")
    }

    @Test(
        "gravity and focus place the crop",
        arguments: [
            (##"gravity = "east""##, true), (##"gravity = "west""##, false), (##"gravity = "centre""##, false),
            ("focus = { 0.9, 0.5 }", true), ("focus = { 0.1, 0.5 }", false),
        ])
    func placed(_ parameter: String, keepsObject: Bool) async throws {
        let pixels = try await run(
            ##"downsample { size = 200, fit = "cover", \##(parameter) }"##, input: Self.objectAtTheRight)
        #expect((pixels.width, pixels.height) == (200, 200))
        #expect((Self.orange(pixels) > 3000) == keepsObject, "\(parameter): \(Self.orange(pixels)) orange pixels")
    }

    @Test("north keeps the top of a tall image, south the bottom")
    func northAndSouth() async throws {
        // Red top quarter, blue below: a 100x100 cover of the 100x400 scaled image.
        let tall = Fixtures.painted(width: 200, height: 800) { _, y in y < 200 ? [255, 0, 0] : [0, 0, 255] }
        let north = try await run(##"downsample { size = 100, fit = "cover", gravity = "north" }"##, input: tall)
        let south = try await run(##"downsample { size = 100, fit = "cover", gravity = "south" }"##, input: tall)
        #expect(north[50, 50][0] > 240 && north[50, 50][2] < 15, "north is red: \(north[50, 50])")
        #expect(north[50, 2][0] > 240)
        #expect(south[50, 50][2] > 240 && south[50, 50][0] < 15, "south is blue: \(south[50, 50])")
    }

    @Test("contain keeps the whole image and pads the box with background, placed by gravity")
    func contain() async throws {
        let wide = Fixtures.quadrants(width: 400, height: 200, format: .png)
        let centred = try await run(
            ##"downsample { size = 100, fit = "contain", background = "#ff00ff" }"##, input: wide)
        #expect((centred.width, centred.height) == (100, 100))
        #expect(centred[50, 2] == [255, 0, 255] && centred[50, 97] == [255, 0, 255], "magenta above and below")
        #expect(
            centred[10, 30][0] > 240 && centred[10, 30][1] < 15,
            "the red quadrant, unscaled in shape: \(centred[10, 30])")
        let top = try await run(
            ##"downsample { size = 100, fit = "contain", gravity = "north", background = "#ff00ff" }"##, input: wide)
        #expect(
            top[10, 5][0] > 240 && top[10, 5][1] < 15 && top[50, 90] == [255, 0, 255], "image at the top, padding below"
        )
    }

    @Test("dpr scales the box")
    func dpr() async throws {
        let pixels = try await run("downsample { size = 100, dpr = 2 }", input: Fixtures.sample)
        #expect((pixels.width, pixels.height) == (200, 133))
    }

    @Test(
        "a gravity or focus that cannot apply is an error at load, with file:line",
        arguments: [
            (##"downsample { size = 100, gravity = "north" }"##, "gravity needs fit = \"cover\""),
            (
                ##"downsample { size = 100, fit = "cover", gravity = "north", focus = { 0.5, 0.5 } }"##,
                "gravity or focus, not both"
            ),
            (##"downsample { size = 100, fit = "contain", gravity = "attention" }"##, "keeps the whole image"),
            (##"downsample { size = 100, background = "#ffffff" }"##, "background needs fit = \"contain\""),
            (##"downsample { size = 100, fit = "cover", focus = { 1.5, 0.5 } }"##, "between 0 and 1, got 1.5"),
            (##"downsample { size = 100, fit = "cover", focus = { 0.5 } }"##, "a list of 2 numbers"),
            (##"downsample { size = 100, fit = "contain", background = "pink" }"##, "a colour like"),
        ])
    func refused(_ stage: String, _ message: String) throws {
        let lua = "profile \"p\" {\n  fetch {}, decode {},\n  \(stage),\n  encode {} }"
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "crop.lua") }
        #expect(error?.description.hasPrefix("crop.lua:3:") == true, "\(String(describing: error))")
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }
}
