import CVips
import Foundation
import PipelineHost
import PlaceholderHashes

/// Describes an image as decode opened it: size, format, frames, alpha, EXIF, the dominant
/// colour and both placeholders, as one JSON object. The header gives most of it; the colour
/// and the placeholders come from a copy shrunk on load to 100 × 100, so the full pixels are
/// never decoded. A profile setting: `pipelinehost info` and serve's `/info` run it after the
/// profile's own fetch, cache and decode.
struct InfoStage: Stage {
    struct Keys: ParameterList {
        let exif = Parameter<Bool>(
            "exif", .boolean, default: false,
            doc:
                "include the EXIF camera make, model and date taken (left out by default: they say who took a photo, and when)"
        )
        let gps = Parameter<Bool>(
            "gps", .boolean, default: false,
            doc: "include the EXIF GPS position (left out by default: a photo's location is personal)")
        let blurhashX = Parameter<Int>(
            "blurhash_x", .integer(1...9), default: 4,
            doc: "BlurHash components across")
        let blurhashY = Parameter<Int>(
            "blurhash_y", .integer(1...9), default: 3,
            doc: "BlurHash components down")
    }

    static let definition = StageDefinition(
        name: "info",
        summary:
            "A profile setting for `pipelinehost info` and serve's /info: width and height (upright), format, frames, "
            + "alpha, bytes, orientation, EXIF make, model and date taken (only with exif = true; GPS only with gps = true), the dominant colour, "
            + "a BlurHash and a ThumbHash, as JSON, and the faces when the profile has a faces stage after decode. "
            + "Read from the header and a copy shrunk on load to 100 px.",
        input: .image, output: .encoded,
        capabilities: StageCapabilities(profileSetting: .info),
        parameters: Keys.specs,
        make: { p in
            InfoStage(exif: p[\Keys.exif], gps: p[\Keys.gps], blurhash: (p[\Keys.blurhashX], p[\Keys.blurhashY]))
        })

    let exif: Bool
    let gps: Bool
    let blurhash: (x: Int, y: Int)

    /// The JSON object, keys sorted.
    struct Info: Encodable {
        var width: Int
        var height: Int
        var format: String
        var frames: Int
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var duration_ms: Int?
        var loop: Int?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var has_alpha: Bool
        var bytes: Int
        var orientation: Int
        var dominant: String?
        var blurhash: String
        var thumbhash: String
        var exif: [String: String]?
        var gps: [String: Double]?
        /// The faces a faces stage found, in the upright image's pixels, largest first.
        var faces: [Box]?
    }

    struct Box: Encodable {
        var x: Int
        var y: Int
        var w: Int
        var h: Int
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "info")
        guard let bytes = image.undecodedBytes else {
            throw PipelineError(
                .stageFailed,
                "info: reads the image as decode opened it; it cannot follow a stage that changed the pixels")
        }
        let (exif, gps, blurhash) = (exif, gps, blurhash)
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            let facts = ImageFacts(handle: image.handle)
            let small = try image.smallRGBA(fitting: 100)
            let size = facts.uprightSize
            var info = Info(
                width: size.width, height: size.height, format: facts.format, frames: facts.frames,
                has_alpha: facts.hasAlpha, bytes: bytes.count, orientation: facts.orientation,
                dominant: DominantColour.hex(of: small),
                blurhash: BlurHash.encode(small, x: blurhash.x, y: blurhash.y),
                thumbhash: Data(ThumbHash.encode(small)).base64EncodedString(), exif: exif ? facts.exif : nil)
            if let timing = facts.timing {
                info.duration_ms = timing.durationMs
                info.loop = timing.loop
            }
            info.faces = image.regions?.map {
                let box = $0.pixels(of: size)
                return Box(x: box.x, y: box.y, w: box.width, h: box.height)
            }
            if gps, let position = facts.gps {
                info.gps = ["latitude": position.latitude, "longitude": position.longitude]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let json = try? encoder.encode(info) else {
                throw PipelineError(.encodeFailed, "info: cannot write JSON")
            }
            return .encoded(
                EncodedImage(bytes: ImageBytes(copying: json), format: "json", size: size, sourceSize: image.sourceSize)
            )
        }
    }
}
