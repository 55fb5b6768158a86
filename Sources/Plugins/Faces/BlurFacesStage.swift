import CFaces
import PipelineHost
import VipsPlugin

/// Blurs the faces an earlier `faces` stage found, for privacy. Put it after downsample, which
/// carries the faces through its resize and crop, so the blur runs on the small image.
struct BlurFacesStage: Stage {
    struct Keys: ParameterList {
        let sigma = OptionalParameter<Double>(
            "sigma", .number(1...200),
            doc: "the blur's radius in pixels (left out: a sixth of each face's size, too much to recognise it)")
        let margin = Parameter<Double>(
            "margin", .number(0...1), default: 0.25,
            doc: "how far past each face's box to blur, as a fraction of its size (hair, ears)")
    }

    static let definition = StageDefinition(
        name: "blur_faces",
        summary:
            "Blur the faces a faces stage found, in every frame. A stage that moves pixels without carrying the faces "
            + "along (rotate, trim, a smart crop) between them fails the request rather than leave a face unblurred.",
        input: .image, output: .image, role: .process,
        capabilities: StageCapabilities(needsFound: { _ in "faces" }),
        parameters: Keys.specs,
        make: { BlurFacesStage(sigma: $0[\Keys.sigma] ?? 0, margin: $0[\Keys.margin]) })

    let sigma: Double
    let margin: Double

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard let regions = try input.regions(for: "blur_faces") else {
            throw PipelineError(
                .stageFailed,
                "blur_faces: a stage since faces moved the pixels and lost the faces (rotate, trim, a smart crop); "
                    + "blur them before it, or after a downsample with gravity = \"faces\"")
        }
        guard !regions.isEmpty else { return input }
        let (sigma, margin) = (sigma, margin)
        return try await input.applyingVipsInPlace("blur_faces", in: context) { image, output in
            let size = PixelSize(width: Int(image.pointee.Xsize), height: Int(vips_image_get_page_height(image)))
            let boxes = regions.map { region in
                let box = region.grown(by: margin).pixels(of: size)
                return ph_face_box(x: Int32(box.x), y: Int32(box.y), width: Int32(box.width), height: Int32(box.height))
            }
            return ph_faces_blur(image, boxes, Int32(boxes.count), sigma, &output)
        }
    }
}
