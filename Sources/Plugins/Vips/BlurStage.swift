import CVips
import PipelineHost

/// Gaussian blur, optionally dimmed toward black for a background behind text. Put it after
/// downsample: a blur costs roughly the square of the image's side. It runs at libvips'
/// approximate precision: a third of the exact blur's cost, within about 0.1/255 of its look.
struct BlurStage: Stage {
    static let definition = StageDefinition(
        name: "blur",
        summary: "Gaussian blur with an optional dim toward black; run it after downsample.",
        input: .image, output: .image,
        parameters: [
            ParameterSpec("sigma", .number(0.1...200), default: .number(10), doc: "blur radius (Gaussian sigma) in pixels"),
            ParameterSpec("dim", .number(0...1), default: .number(0), doc: "darken toward black: 0 keeps, 1 is black"),
        ],
        make: { BlurStage(sigma: $0.number("sigma")!, dim: $0.number("dim")!) })

    let sigma: Double
    let dim: Double

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "blur")
        let (sigma, dim) = (sigma, dim)
        return try await context.runBlocking { () throws(PipelineError) -> StageValue in
            var result = try image.prepared().derive("blur") { ph_vips_gaussblur($0, sigma, 1, &$1) }
            if dim > 0 {
                result = try result.derive("dim") { ph_vips_darken($0, 1 - dim, &$1) }
            }
            return .image(VipsPipelineImage(handle: try image.materialized("blur", result), undecodedBytes: nil,
                                            sourceSize: image.sourceSize))
        }
    }
}
