import PipelineHost
import TestSupport
import Testing

/// sharpen, rotate, flip, pad, trim, flatten and round_corners, each checked by pixels.
@Suite("sharpen, rotate, flip, pad, trim, flatten, round_corners", .needs(.pixels))
struct ShapeStageTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func run(_ stages: String, input: [UInt8]) async throws -> Fixtures.Pixels {
        try await TestPipeline.pixels(after: stages, input: input, in: directory)
    }

    static let quadrants = Fixtures.quadrants(width: 400, height: 200, format: .png)
    static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255],
        white: [UInt8] = [255, 255, 255]

    @Test("sharpening raises the edge contrast a downscale softened, and keeps the tone")
    func sharpen() async throws {
        // 16 px squares, dark and light, downscaled to 300: soft edges.
        let checkerboard = Fixtures.painted(width: 800, height: 800) { x, y in
            (x / 16 + y / 16) % 2 == 0 ? [30, 30, 30] : [230, 230, 230]
        }
        let plain = try await run("downsample { size = 300 }", input: checkerboard)
        let sharpened = try await run("downsample { size = 300 }, sharpen {}", input: checkerboard)
        let before = Self.edgeContrast(plain), after = Self.edgeContrast(sharpened)
        #expect(after > before * 1.1, "mean difference of horizontal neighbours \(before) -> \(after)")
        #expect(abs(Self.mean(sharpened) - Self.mean(plain)) < 4)
    }

    static func edgeContrast(_ pixels: Fixtures.Pixels) -> Double {
        var total = 0
        for y in 0..<pixels.height {
            for x in 1..<pixels.width { total += abs(Int(pixels[x, y][0]) - Int(pixels[x - 1, y][0])) }
        }
        return Double(total) / Double(pixels.height * (pixels.width - 1))
    }

    static func mean(_ pixels: Fixtures.Pixels) -> Double {
        Double(pixels.samples.reduce(0) { $0 + Int($1) }) / Double(pixels.samples.count)
    }

    @Test(
        "rotate turns clockwise; flip mirrors",
        arguments: [
            // (stages, size, top-left, top-right, bottom-left)
            ("rotate { angle = 90 }", 200, 400, blue, red, white),
            ("rotate { angle = 180 }", 400, 200, white, blue, green),
            ("rotate { angle = 270 }", 200, 400, green, white, red),
            ("flip {}", 400, 200, green, red, white),
            (##"flip { direction = "vertical" }"##, 400, 200, blue, white, red),
        ])
    func orientation(
        _ stages: String, width: Int, height: Int, topLeft: [UInt8], topRight: [UInt8], bottomLeft: [UInt8]
    ) async throws {
        let pixels = try await run(stages, input: Self.quadrants)
        #expect((pixels.width, pixels.height) == (width, height))
        #expect(
            pixels[5, 5] == topLeft && pixels[width - 5, 5] == topRight && pixels[5, height - 5] == bottomLeft,
            "\(pixels[5, 5]) \(pixels[width - 5, 5]) \(pixels[5, height - 5])")
    }

    @Test(
        "a quarter turn and a vertical flip right after decode read a large JPEG, which loads top to bottom once",
        arguments: [
            ("rotate { angle = 90 }", 1600, 2400), ("rotate { angle = 270 }", 1600, 2400),
            (##"flip { direction = "vertical" }"##, 2400, 1600),
        ])
    func outOfOrder(_ stages: String, width: Int, height: Int) async throws {
        let pixels = try await run(stages, input: Fixtures.sample)
        #expect((pixels.width, pixels.height) == (width, height))
    }

    @Test("pad places the image on an exact canvas of the background colour")
    func pad() async throws {
        let small = Fixtures.quadrants(width: 100, height: 50, format: .png)
        let pixels = try await run(##"pad { width = 200, height = 200, background = "#00ff00" }"##, input: small)
        #expect((pixels.width, pixels.height) == (200, 200))
        #expect(pixels[0, 0] == Self.green && pixels[199, 199] == Self.green && pixels[100, 20] == Self.green)
        #expect(pixels[55, 80] == Self.red, "the image's top-left quadrant at (50, 75)")
        let corner = try await run(##"pad { width = 200, height = 200, gravity = "south_east" }"##, input: small)
        #expect(corner[0, 0] == [0, 0, 0] && corner[105, 155] == Self.red && corner[199, 199] == Self.white)
    }

    @Test("trim removes exactly a uniform border")
    func trim() async throws {
        // A white border of 7 px left, 11 top, 5 right, 3 bottom around a 108x66 pattern.
        let framed = Fixtures.painted(width: 120, height: 80) { x, y in
            guard (7..<115).contains(x), (11..<77).contains(y) else { return [255, 255, 255] }
            return (x / 9 + y / 9) % 2 == 0 ? [20, 40, 200] : [200, 30, 30]
        }
        let pixels = try await run("trim {}", input: framed)
        #expect((pixels.width, pixels.height) == (108, 66))
        #expect(pixels[0, 0] != Self.white && pixels[107, 65] != Self.white)
        let plain = try await run("trim {}", input: Fixtures.painted(width: 30, height: 20) { _, _ in [9, 9, 9] })
        #expect((plain.width, plain.height) == (30, 20), "one colour throughout is kept whole")
    }

    @Test("flatten composes alpha onto the background and drops it")
    func flatten() async throws {
        let half = Fixtures.painted(width: 40, height: 20, alpha: true) { x, _ in
            x < 20 ? [255, 0, 0, 0] : [255, 0, 0, 255]
        }
        let pixels = try await run(##"flatten { background = "#0000ff" }"##, input: half)
        #expect(pixels.bands == 3)
        #expect(pixels[5, 10] == Self.blue && pixels[35, 10] == Self.red)
    }

    @Test("round_corners makes the corners transparent, or the background colour")
    func roundCorners() async throws {
        let square = Fixtures.painted(width: 100, height: 100) { _, _ in [255, 0, 0] }
        let pixels = try await run("round_corners { radius = 30 }", input: square)
        #expect(pixels.bands == 4)
        #expect(pixels[0, 0][3] == 0 && pixels[99, 0][3] == 0 && pixels[0, 99][3] == 0 && pixels[99, 99][3] == 0)
        #expect(pixels[50, 50][3] == 255 && pixels[50, 0][3] == 255 && pixels[0, 50][3] == 255)
        #expect(pixels[4, 4][3] == 0 && pixels[12, 12][3] > 200, "outside, then inside, the 30 px arc")
        let filled = try await run(##"round_corners { radius = 30, background = "#00ff00" }"##, input: square)
        #expect(filled.bands == 3 && filled[0, 0] == Self.green && filled[50, 50] == Self.red)
    }

    @Test(
        "wrong parameters are errors at load, with file:line",
        arguments: [
            ("rotate { angle = 100 }", "must be 90, 180 or 270"),
            ("pad { width = 100 }", "pad needs width and height"),
            (##"flatten { background = "#12345" }"##, "a colour like"),
            (##"flip { direction = "diagonal" }"##, "must be one of"),
        ])
    func refused(_ stage: String, _ message: String) throws {
        let lua = "profile \"p\" {\n  fetch {}, decode {},\n  \(stage),\n  encode {} }"
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "shape.lua") }
        #expect(error?.description.hasPrefix("shape.lua:3:") == true, "\(String(describing: error))")
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }
}
