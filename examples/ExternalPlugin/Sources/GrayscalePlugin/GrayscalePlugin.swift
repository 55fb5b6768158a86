import CGrayscale
import PipelineHost
import VipsPlugin

/// Registers `grayscale`: the image in shades of grey. A plugin outside pipelinehost's
/// repository, built with the same API as the built-in stages.
public enum GrayscalePlugin: PipelinePlugin {
    /// The plugin API this plugin is written for; a host of another major version refuses it.
    public static let apiVersion = PluginAPIVersion(major: 1, minor: 0)

    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "grayscale",
                summary: "The image in shades of grey (R = G = B), as 8-bit sRGB.",
                input: .image, output: .image,
                parameters: [],
                make: { _ in GrayscaleStage() }))
    }
}

/// Runs for many requests at once; it holds no state.
struct GrayscaleStage: Stage {
    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        try await input.applyingVips("grayscale", in: context) { image, output in grayscale_apply(image, &output) }
    }
}
