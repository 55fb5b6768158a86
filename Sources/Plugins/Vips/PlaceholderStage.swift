import CVips
import Foundation
import PipelineHost
import PlaceholderHashes

/// Ends a profile in a placeholder instead of an image: a BlurHash, a ThumbHash (standard
/// base64) or an LQIP data URL (a tiny WebP or JPEG as `data:image/...;base64,...`), as text.
/// Made from a copy shrunk to 100 px (the LQIP to its `size`), on load when the image has only
/// been opened, so a placeholder profile is `fetch, decode, placeholder`.
struct PlaceholderStage: Stage {
    struct Keys: ParameterList {
        let kind = Parameter<KindName>(
            "kind", default: .thumbhash,
            doc: "thumbhash (base64), blurhash, or lqip (a data: URL of a tiny blurred image)")
        let blurhashX = Parameter<Int>(
            "blurhash_x", .integer(1...9), default: 4,
            doc: "blurhash: components across")
        let blurhashY = Parameter<Int>(
            "blurhash_y", .integer(1...9), default: 3,
            doc: "blurhash: components down")
        let size = Parameter<Int>(
            "size", .integer(4...64), default: 16,
            doc: "lqip: longest side in pixels")
        let format = Parameter<TinyFormat>(
            "format", default: .webp,
            doc: "lqip: the tiny image's format")
        let quality = Parameter<Int>(
            "quality", .integer(1...100), default: 40,
            doc: "lqip: the tiny image's quality")
    }

    static let definition = StageDefinition(
        name: "placeholder",
        summary: "End a profile in a placeholder to show while the image loads, written as text: kind = \"thumbhash\" "
            + "(base64), \"blurhash\" (blurhash_x by blurhash_y components) or \"lqip\" (a data: URL of a tiny webp or jpeg, size px). "
            + "Shrinks on load to 100 px; the full pixels are never decoded.",
        input: .image, output: .encoded,
        parameters: Keys.specs,
        make: { try PlaceholderStage($0) })

    /// The `kind` a profile writes.
    enum KindName: String, ParameterChoice { case thumbhash, blurhash, lqip }

    /// An lqip's format.
    enum TinyFormat: String, ParameterChoice { case webp, jpeg }

    enum Kind: Sendable {
        case thumbhash
        case blurhash(x: Int, y: Int)
        case lqip(size: Int, format: TinyFormat, quality: Int)
    }

    let kind: Kind

    init(_ p: StageParameters) throws(ParameterError) {
        kind =
            switch p[\Keys.kind] {
            case .thumbhash: .thumbhash
            case .blurhash: .blurhash(x: p[\Keys.blurhashX], y: p[\Keys.blurhashY])
            case .lqip: .lqip(size: p[\Keys.size], format: p[\Keys.format], quality: p[\Keys.quality])
            }
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "placeholder")
        let kind = kind
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            let text: String, format: String
            switch kind {
            case .thumbhash:
                (text, format) = (
                    Data(ThumbHash.encode(try image.smallRGBA(fitting: 100))).base64EncodedString(), "thumbhash"
                )
            case .blurhash(let x, let y):
                (text, format) = (BlurHash.encode(try image.smallRGBA(fitting: 100), x: x, y: y), "blurhash")
            case .lqip(let size, let tiny, let quality):
                (text, format) = (
                    try Self.dataURL(of: image.smallImage(fitting: size), format: tiny, quality: quality), "lqip"
                )
            }
            return .encoded(
                EncodedImage(bytes: ImageBytes(copying: Array(text.utf8)), format: format, sourceSize: image.sourceSize)
            )
        }
    }

    /// A tiny image as a data: URL, metadata stripped.
    static func dataURL(of image: VipsImageHandle, format: TinyFormat, quality: Int) throws(PipelineError) -> String {
        var options = ph_save_options(
            quality: Int32(quality), strip: 1, keep_icc: 0,
            effort: Int32(EncodeStage.encoderEffort(format == .jpeg ? .jpeg : .webp, profile: nil)), lossless: 0,
            progressive: 0,
            subsample: PH_SUBSAMPLE_AUTO, optimize_coding: 1)
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        var failure = PH_SAVE_OK
        let errors = VipsErrorMark()
        guard
            ph_vips_save(
                image.pointer, format == .jpeg ? PH_FORMAT_JPEG : PH_FORMAT_WEBP, &options, nil, 0, &buffer, &length,
                &failure)
                == 0,
            let buffer
        else {
            throw PipelineError(
                failure == PH_SAVE_FAILED_INPUT ? .decodeFailed : .encodeFailed,
                "placeholder: \(errors.messages)")
        }
        defer { ph_vips_free(buffer) }
        let base64 = Data(bytes: buffer, count: length).base64EncodedString()
        return "data:\(FormatChoice.mediaType(format.rawValue));base64,\(base64)"
    }
}
