import CFaces
import PipelineHost
import VipsPlugin

/// Finds the faces in an image and passes the image on, still undecoded, with them. It looks
/// at a copy of about `detail` × `detail` pixels shrunk on load, never at the full image, so
/// its cost is the same for a 5K photo as for a small one. A failed detection is logged and
/// counts as no face: it never fails a request.
struct FacesStage: Stage {
    struct Keys: ParameterList {
        let detail = Parameter<Int>(
            "detail", .integer(200...1200), default: 512,
            doc:
                "the copy searched holds about detail x detail pixels, whatever its shape; larger finds smaller faces (a face must be about 34 px in it: 8% of the shorter side of a 3:2 photo at 512) and costs more"
        )
        let limit = Parameter<Int>(
            "limit", .integer(1...100), default: 20,
            doc: "the most faces kept, largest first")
    }

    static let definition = StageDefinition(
        name: "faces",
        summary:
            "Find frontal faces (OpenCV's LBP cascade, each face confirmed by its Haar cascade) in a copy shrunk on load, "
            + "and pass the image on with them: downsample's gravity = \"faces\" crops around them, blur_faces hides "
            + "them, info lists them.",
        input: .image, output: .image, role: .process,
        capabilities: StageCapabilities(finds: "faces"),
        parameters: Keys.specs,
        make: { p in
            var error = [CChar](repeating: 0, count: 512)
            guard ph_faces_check(&error, error.count) == 0 else {
                throw ParameterError(
                    String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            return FacesStage(detail: p[\Keys.detail], limit: p[\Keys.limit])
        })

    let detail: Int
    let limit: Int

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let (limit, logger, source) = (limit, context.logger, context.source)
        let finder = "faces detail=\(detail) limit=\(limit)"
        return try await input.findingRegions("faces", finder: finder, area: detail * detail, in: context) { pixels in
            var boxes = [ph_face_box](repeating: ph_face_box(), count: limit)
            var error = [CChar](repeating: 0, count: 512)
            let found = pixels.rgba.withUnsafeBufferPointer {
                ph_faces_detect(
                    $0.baseAddress, Int32(pixels.width), Int32(pixels.height), 4, &boxes, Int32(limit), &error,
                    error.count)
            }
            guard found >= 0 else {
                let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                logger.warning(
                    "faces: detection failed, cropping as if there were none: \(message)",
                    metadata: ["source": "\(source)"])
                return nil
            }
            return boxes.prefix(Int(found)).map {
                ImageRegion(pixels: Int($0.x), Int($0.y), Int($0.width), Int($0.height), of: pixels.size)
            }
        }
    }
}
