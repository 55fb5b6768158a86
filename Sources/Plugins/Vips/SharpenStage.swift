import CVips
import PipelineHost

/// Unsharp masking, for the edges a downscale softens. libvips sharpens lightness only, so
/// colours do not fringe.
struct SharpenStage: Stage {
    struct Keys: ParameterList {
        let sigma = Parameter<Double>(
            "sigma", .number(0.1...10), default: 0.5,
            doc: "radius in pixels of the blur it sharpens against (libvips' 0.5 suits thumbnails)")
        let amount = Parameter<Double>(
            "amount", .number(0...20), default: 3,
            doc: "how much strong edges are sharpened (libvips' m2)")
    }

    static let definition = StageDefinition(
        name: "sharpen",
        summary:
            "Sharpen edges that a downscale softened; run it after downsample. Lightness only, so colours do not fringe.",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { SharpenStage(sigma: $0[\Keys.sigma], amount: $0[\Keys.amount]) })

    let sigma: Double
    let amount: Double

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let (sigma, amount) = (sigma, amount)
        return try await input.applyingVips("sharpen", in: context) { image, output in
            ph_vips_sharpen(image, sigma, amount, &output)
        }
    }
}
