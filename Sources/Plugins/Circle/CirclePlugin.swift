import CCircle
import PipelineHost
import VipsPlugin

/// Registers `circle`: a round crop for avatars. An example of an image plugin: it reads the
/// image the vips stages pass along through `StageValue.applyingVips`.
public enum CirclePlugin: PipelinePlugin {
    struct Keys: ParameterList {
        let background = OptionalParameter<String>(
            "background", .string,
            doc: "fill outside the circle with this colour, \"#rrggbb\"; without it, transparent")
    }

    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "circle",
                summary: "Keep the centred circle that fits the image. Outside it is transparent (encode png or webp), "
                    + "or filled with background for formats without alpha such as jpeg.",
                input: .image, output: .image,
                parameters: Keys.specs,
                make: { try CircleStage(background: $0[\Keys.background]) }))
    }
}

struct CircleStage: Stage {
    let background: (red: Double, green: Double, blue: Double)?

    init(background text: String?) throws(ParameterError) {
        guard let text else { background = nil; return }
        let colour = try Colour.parameter("background", of: "circle", text)
        background = (colour.red, colour.green, colour.blue)
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let flatten: Int32 = background == nil ? 0 : 1
        let (red, green, blue) = background ?? (0, 0, 0)
        return try await input.applyingVips("circle", in: context) { image, output in
            ph_circle(image, flatten, red, green, blue, &output)
        }
    }

}
