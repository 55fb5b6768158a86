import CVips
import PipelineHost

/// Gaussian blur, optionally dimmed toward black for a background behind text. Put it after
/// downsample: a blur costs roughly the square of the image's side. It runs at libvips'
/// approximate precision: a third of the exact blur's cost, within about 0.1/255 of its look.
///
/// With `size`, the blur runs on the smaller image it is given and the result is scaled up to
/// `size`, with `sigma` counted in output pixels. A strong blur is a low-pass filter, so this
/// looks the same (within about 1/255 on average) while the decode, downsample and blur before
/// it work on a quarter or a sixteenth of the pixels: `downsample { size = 128 }` then
/// `blur { sigma = 12, size = 512 }`.
struct BlurStage: Stage {
    struct Keys: ParameterList {
        let sigma = Parameter<Double>(
            "sigma", .number(0.1...200), default: 10,
            doc: "blur radius (Gaussian sigma) in output pixels")
        let dim = Parameter<Double>(
            "dim", .number(0...1), default: 0,
            doc: "darken toward black: 0 keeps, 1 is black")
        let size = OptionalParameter<Int>(
            "size", .integer(1...16384),
            doc: "scale the blurred result so its longest side is size (downsample small first, and save the work)")
    }

    static let definition = StageDefinition(
        name: "blur",
        // 2: the approximate precision (a look within 0.1/255 of version 1's exact blur).
        version: 2,
        summary: "Gaussian blur with an optional dim toward black; run it after downsample. "
            + "With size, blur a small image and scale the result up to size: the same look for a fraction of the cost.",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { BlurStage(sigma: $0[\Keys.sigma], dim: $0[\Keys.dim], size: $0[\Keys.size]) })

    let sigma: Double
    let dim: Double
    let size: Int?

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "blur")
        let (sigma, dim, size) = (sigma, dim, size)
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            let prepared = try image.prepared()
            let target =
                size.map { Self.outputSize(longest: $0, of: prepared.size, source: image.sourceSize) } ?? prepared.size
            let scale =
                Double(max(target.width, target.height))
                / Double(max(1, max(prepared.size.width, prepared.size.height)))
            var result = try prepared.derive("blur") { ph_vips_gaussblur($0, sigma / scale, 1, &$1) }
            // Dimmed before it is scaled: darkening commutes with a linear resize, and at the
            // blur's own size it touches a sixteenth of the pixels of a 4x scale.
            if dim > 0 {
                result = try result.derive("dim") { ph_vips_darken($0, 1 - dim, &$1) }
            }
            if target != prepared.size {
                let (hscale, vscale) = (
                    Double(target.width) / Double(prepared.size.width),
                    Double(target.height) / Double(prepared.size.height)
                )
                result = try result.derive("blur scale") { ph_vips_rescale($0, hscale, vscale, &$1) }
            }
            return .image(image.derived(try image.materialized("blur", result)))
        }
    }

    /// The output of `size`: its longest side is `longest`, and its shape is the source's when
    /// the source has the same orientation, so a small intermediate's rounding (85 rows for 341)
    /// does not show in the result.
    static func outputSize(longest: Int, of image: PixelSize, source: PixelSize) -> PixelSize {
        let shape =
            (source.width >= source.height) == (image.width >= image.height) && source.width > 0 && source.height > 0
            ? source : image
        if shape.width >= shape.height {
            return PixelSize(
                width: longest,
                height: max(1, Int((Double(longest) * Double(shape.height) / Double(shape.width)).rounded())))
        }
        return PixelSize(
            width: max(1, Int((Double(longest) * Double(shape.width) / Double(shape.height)).rounded())),
            height: longest)
    }
}
