import CVips
import PipelineHost

/// Turns the image clockwise. EXIF orientation is already applied before any stage sees the
/// image; this is for turning it further.
struct RotateStage: Stage {
    struct Keys: ParameterList {
        let angle = Parameter<Int>(
            "angle", .integer(90...270), default: 90,
            doc: "90, 180 or 270")
    }

    static let definition = StageDefinition(
        name: "rotate",
        summary: "Turn clockwise by 90, 180 or 270 degrees (EXIF orientation is already applied).",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { try RotateStage($0[\Keys.angle]) })

    let angle: Int32

    init(_ angle: Int) throws(ParameterError) {
        guard angle % 90 == 0 else { throw ParameterError("rotate: 'angle' must be 90, 180 or 270, got \(angle)") }
        self.angle = Int32(angle)
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let angle = angle
        return try await input.applyingVips("rotate", in: context, outOfOrder: true) { image, output in
            ph_vips_rotate(image, angle, &output)
        }
    }
}

/// Mirrors the image.
struct FlipStage: Stage {
    /// Which way it mirrors.
    enum Direction: String, ParameterChoice {
        /// Left and right swap.
        case horizontal
        /// Top and bottom swap.
        case vertical
    }

    struct Keys: ParameterList {
        let direction = Parameter<Direction>(
            "direction", default: .horizontal,
            doc: "horizontal swaps left and right; vertical swaps top and bottom")
    }

    static let definition = StageDefinition(
        name: "flip",
        summary: "Mirror left to right (horizontal) or top to bottom (vertical).",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { FlipStage(horizontal: $0[\Keys.direction] == .horizontal) })

    let horizontal: Bool

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let (flag, vertical): (Int32, Bool) = (horizontal ? 1 : 0, !horizontal)
        return try await input.applyingVips("flip", in: context, outOfOrder: vertical) { image, output in
            ph_vips_flip(image, flag, &output)
        }
    }
}
