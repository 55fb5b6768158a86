import CVips
import Foundation
import PipelineHost

/// A watermark: an image file drawn over every result. The file is read and decoded once, when
/// the profile loads, and shared by every request; its digest is part of the stage's identity,
/// so replacing the file makes new variants.
struct OverlayStage: Stage {
    static let definition = StageDefinition(
        name: "overlay",
        summary: "Draw an image (a watermark) over the result: a file relative to the profile, placed by gravity inside a margin, "
            + "at an opacity, scaled to a fraction of the image's width.",
        input: .image, output: .image,
        parameters: [
            ParameterSpec("image", .string, doc: "the overlay's file: png with alpha, or any format decode reads; relative to the profile file"),
            ParameterSpec("gravity", .choice(Gravity.names), default: .string("south_east"), doc: "where it goes"),
            ParameterSpec("margin", .integer(0...4096), default: .integer(0), doc: "pixels kept free at the edges"),
            ParameterSpec("opacity", .number(0...1), default: .number(1), doc: "0 invisible, 1 as drawn"),
            ParameterSpec("scale", .number(0.01...1), doc: "its width as a fraction of the image's (its own size when left out)"),
        ],
        make: { try OverlayStage($0) })

    let overlay: VipsImageHandle
    let x: Double
    let y: Double
    let margin: Int32
    let opacity: Double
    let scale: Double
    let identityDetail: String?

    init(_ p: StageParameters) throws(ParameterError) {
        guard let written = p.string("image") else {
            throw ParameterError("overlay needs image, a file relative to the profile, like overlay { image = \"logo.png\" }")
        }
        let base = p.profileFile.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
        let path = written.hasPrefix("/") ? written : (base?.appendingPathComponent(written).path ?? written)
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else {
            throw ParameterError("overlay: cannot read image \"\(written)\" (looked at \(path))")
        }
        let bytes = ImageBytes(copying: [UInt8](data))
        guard (try? VipsRuntime.start()) != nil, let opened = ph_vips_open(bytes.baseAddress, bytes.count, 1) else {
            throw ParameterError("overlay: \"\(written)\" is not an image libvips reads: \(VipsRuntime.takeError())")
        }
        do {
            overlay = try VipsImageHandle(opened, keeping: bytes).derive("overlay load") { ph_vips_copy_memory($0, &$1) }
        } catch {
            throw ParameterError("overlay: \"\(written)\" does not decode: \(error.reason)")
        }
        (x, y) = Gravity.point(p.string("gravity")!)!
        margin = Int32(p.integer("margin")!)
        opacity = p.number("opacity")!
        scale = p.number("scale") ?? 0
        identityDetail = StageIdentity.digest(of: data)
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        if let image = try? input.vipsImage(for: "overlay"), image.frames > 1 {
            throw PipelineError(.stageFailed, "overlay: draws on one frame; leave it out for \(image.frames) frames")
        }
        let (overlay, x, y, margin, opacity, scale) = (overlay, x, y, margin, opacity, scale)
        return try await input.applyingVips("overlay", in: context) { image, output in
            ph_vips_overlay(image, overlay.pointer, scale, opacity, x, y, margin, &output)
        }
    }
}
