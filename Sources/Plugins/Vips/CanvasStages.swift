import CVips
import PipelineHost

/// Extends (or crops) the image to an exact size on a coloured canvas.
struct PadStage: Stage {
    struct Keys: ParameterList {
        let width = OptionalParameter<Int>(
            "width", .integer(1...16384),
            doc: "canvas width in pixels")
        let height = OptionalParameter<Int>(
            "height", .integer(1...16384),
            doc: "canvas height in pixels")
        let background = Parameter<String>(
            "background", .string, default: "#000000",
            doc: "canvas colour, \"#rrggbb\", or \"#rrggbbaa\" for an image with alpha")
        let gravity = Parameter<Gravity>(
            "gravity", default: .centre,
            doc: "where the image sits on the canvas")
    }

    static let definition = StageDefinition(
        name: "pad",
        summary:
            "Place the image on a canvas of exactly width x height in the background colour (a larger image is cropped).",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { try PadStage($0) })

    let width: Int32
    let height: Int32
    let rgba: [Double]
    let x: Double
    let y: Double

    init(_ p: StageParameters) throws(ParameterError) {
        guard let width = p[\Keys.width], let height = p[\Keys.height] else {
            throw ParameterError("pad needs width and height, like pad { width = 300, height = 300 }")
        }
        (self.width, self.height) = (Int32(width), Int32(height))
        rgba = try Colour.parameter("background", of: "pad", p[\Keys.background]).rgba
        (x, y) = p[\Keys.gravity].point
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let (width, height, rgba, x, y) = (width, height, rgba, x, y)
        return try await input.applyingVips("pad", in: context) { image, output in
            ph_vips_pad(image, width, height, x, y, rgba, &output)
        }
    }
}

/// Cuts away a uniform border.
struct TrimStage: Stage {
    struct Keys: ParameterList {
        let threshold = Parameter<Double>(
            "threshold", .number(0...255), default: 10,
            doc: "how far (0-255) a pixel may be from the border colour and still count as border")
    }

    static let definition = StageDefinition(
        name: "trim",
        summary:
            "Cut away a border of one colour (the top-left pixel's); an image of one colour throughout is kept whole.",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { TrimStage(threshold: $0[\Keys.threshold]) })

    let threshold: Double

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let threshold = threshold
        return try await input.applyingVips("trim", in: context) { image, output in
            ph_vips_trim(image, threshold, &output)
        }
    }
}

/// Composes transparency onto a colour, for formats without alpha.
struct FlattenStage: Stage {
    struct Keys: ParameterList {
        let background = Parameter<String>(
            "background", .string, default: "#ffffff",
            doc: "the colour behind, \"#rrggbb\"")
    }

    static let definition = StageDefinition(
        name: "flatten",
        summary:
            "Compose transparent parts onto a colour and drop the alpha, as jpeg needs; images without alpha pass unchanged.",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { try FlattenStage(Colour.parameter("background", of: "flatten", $0[\Keys.background])) })

    let rgb: [Double]

    init(_ colour: Colour) { rgb = Array(colour.rgba.prefix(3)) }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let rgb = rgb
        return try await input.applyingVips("flatten", in: context) { image, output in
            ph_vips_flatten(image, rgb, &output)
        }
    }
}

/// Rounds the corners: transparent outside, or filled with a background colour.
struct RoundCornersStage: Stage {
    struct Keys: ParameterList {
        let radius = Parameter<Int>(
            "radius", .integer(1...4096), default: 16,
            doc: "corner radius in pixels")
        let background = OptionalParameter<String>(
            "background", .string,
            doc: "fill outside the corners with this colour, \"#rrggbb\"; without it, transparent")
    }

    static let definition = StageDefinition(
        name: "round_corners",
        summary:
            "Round the corners: transparent outside them (encode png or webp), or filled with background for jpeg.",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { try RoundCornersStage($0) })

    let radius: Int32
    let background: [Double]?

    init(_ p: StageParameters) throws(ParameterError) {
        radius = Int32(p[\Keys.radius])
        background = try p[\Keys.background].map { text throws(ParameterError) in
            Array(try Colour.parameter("background", of: "round_corners", text).rgba.prefix(3))
        }
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let (radius, background) = (radius, background)
        return try await input.applyingVips("round_corners", in: context) { image, output in
            guard let background else { return ph_vips_round_corners(image, radius, &output) }
            var rounded: UnsafeMutablePointer<VipsImage>?
            guard ph_vips_round_corners(image, radius, &rounded) == 0, let rounded else { return -1 }
            defer { ph_vips_unref(rounded) }
            return ph_vips_flatten(rounded, background, &output)
        }
    }
}
