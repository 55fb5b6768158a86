import CVips
import PipelineHost

/// Resizes to fit a box. While the image is still undecoded this is libvips' shrink-on-load
/// thumbnail from the encoded bytes, so a 5120x2880 JPEG is never decoded at full size.
///
/// The parameters added after the first release (gravity, focus, background, dpr) have no
/// default: left out, they are not part of the stage's identity, so variants made before
/// they existed keep their keys.
struct DownsampleStage: Stage {
    /// How the image fills the box.
    enum Fit: String, ParameterChoice {
        /// All of the image, inside the box.
        case inside
        /// The box filled, the rest cropped.
        case cover
        /// All of the image, padded to the box.
        case contain
    }

    /// How a JPEG is decoded for the box.
    enum ShrinkOnLoad: String, ParameterChoice {
        /// At the smallest DCT scale that covers the box.
        case speed
        /// At libvips' choice, twice the box or more.
        case quality
    }

    struct Keys: ParameterList {
        let size = OptionalParameter<Int>(
            "size", .integer(1...16384),
            doc: "longest side in pixels (or give width and/or height)")
        let width = OptionalParameter<Int>(
            "width", .integer(1...16384),
            doc: "box width in pixels")
        let height = OptionalParameter<Int>(
            "height", .integer(1...16384),
            doc: "box height in pixels")
        let fit = Parameter<Fit>(
            "fit", default: .inside,
            doc: "inside: keep all of the image; cover: fill the box and crop; contain: keep all of it and pad the box")
        let gravity = OptionalParameter<CropGravity>(
            "gravity",
            doc:
                "cover: the part to keep (centre when left out; attention and entropy are libvips' smartcrop; faces keeps the faces a faces stage found, attention where it found none); contain: where the image sits"
        )
        let focus = OptionalParameter<[Double]>(
            "focus", .numberList(0...1, count: 2),
            doc: "cover: keep the crop centred as near as it can be on { x, y }, fractions of the width and height")
        let background = OptionalParameter<String>(
            "background", .string,
            doc:
                "contain: the padding's colour, \"#rrggbb\" or \"#rrggbbaa\" (black when left out, transparent for images with alpha)"
        )
        let dpr = OptionalParameter<Double>(
            "dpr", .number(1...5),
            doc: "device pixel ratio: the box is this many times larger (1 when left out)")
        let enlarge = Parameter<Bool>(
            "enlarge", .boolean, default: false,
            doc: "also scale images up that are smaller than the box")
        let shrinkOnLoad = Parameter<ShrinkOnLoad>(
            "shrink_on_load", default: .speed,
            doc:
                "speed: a JPEG decoded at the smallest DCT scale that covers the box, as PIL's draft mode and thumbor do; quality: libvips' choice, at twice the box or more, for PNG or near-lossless output (BENCHMARKS.md, \"fit-in 512\", has what each costs)"
        )
    }

    static let definition = StageDefinition(
        name: "downsample",
        summary: "Resize to fit a box with shrink-on-load (vips_thumbnail_buffer), honouring EXIF "
            + "orientation and converting to sRGB. fit = \"cover\" crops to fill the box, at gravity or focus; "
            + "fit = \"contain\" pads it with background.",
        input: .image, output: .image, role: .decode,
        capabilities: StageCapabilities(needsFound: { $0[\Keys.gravity] == .faces ? "faces" : nil }),
        parameters: Keys.specs,
        make: { try DownsampleStage($0) })

    /// Used for a side the profile leaves open ("width = 300" alone).
    private static let unbounded: Int32 = 10_000_000

    let width: Int32
    let height: Int32
    let crop: ph_crop
    /// fit = "contain": the canvas' colour and where the image sits on it.
    let padding: (rgba: [Double], x: Double, y: Double)?
    let enlarge: Bool
    let draft: Bool
    /// gravity = "faces": the crop centres on the regions an earlier stage found.
    let byRegions: Bool

    init(_ p: StageParameters) throws(ParameterError) {
        let size = p[\Keys.size], width = p[\Keys.width], height = p[\Keys.height]
        if size != nil, width != nil || height != nil {
            throw ParameterError("give either size or width/height, not both")
        }
        guard size != nil || width != nil || height != nil else {
            throw ParameterError("needs size, or width and/or height, like downsample { size = 300 }")
        }
        let fit = p[\Keys.fit]
        if fit != .inside, size == nil, width == nil || height == nil {
            throw ParameterError("fit = \"\(fit.rawValue)\" needs both width and height, or size")
        }
        let gravity = p[\Keys.gravity], focus = p[\Keys.focus], background = p[\Keys.background]
        if fit == .inside, gravity != nil || focus != nil {
            throw ParameterError(
                "\(gravity != nil ? "gravity" : "focus") needs fit = \"cover\" (or \"contain\" for gravity)")
        }
        if gravity != nil, focus != nil { throw ParameterError("give gravity or focus, not both") }
        if fit == .contain, focus != nil || gravity?.isSmart == true {
            throw ParameterError(
                "fit = \"contain\" keeps the whole image: it takes a compass gravity, not \(focus != nil ? "focus" : "gravity = \"\(gravity!.rawValue)\"")"
            )
        }
        if background != nil, fit != .contain { throw ParameterError("background needs fit = \"contain\"") }
        let dpr = p[\Keys.dpr] ?? 1
        let scaled = { (side: Int?) -> Int32 in
            side.map { Int32(min(16384, (Double($0) * dpr).rounded())) } ?? Self.unbounded
        }
        self.width = scaled(size ?? width)
        self.height = scaled(size ?? height)
        byRegions = fit == .cover && gravity == .faces
        switch (fit, gravity, focus) {
        // Faces: attention until the run finds the regions (RegionFraming).
        case (.cover, .attention, _), (.cover, .faces, _): crop = ph_crop(mode: PH_CROP_ATTENTION, x: 0.5, y: 0.5)
        case (.cover, .entropy, _): crop = ph_crop(mode: PH_CROP_ENTROPY, x: 0.5, y: 0.5)
        case (.cover, _, let focus?): crop = ph_crop(mode: PH_CROP_AT, x: focus[0], y: focus[1])
        case (.cover, .compass(let gravity)?, _) where gravity != .centre:
            crop = ph_crop(mode: PH_CROP_AT, x: gravity.point.x, y: gravity.point.y)
        case (.cover, _, _): crop = ph_crop(mode: PH_CROP_CENTRE, x: 0.5, y: 0.5)
        default: crop = ph_crop(mode: PH_CROP_NONE, x: 0.5, y: 0.5)
        }
        if fit == .contain {
            // attention and entropy were refused above: a contain gravity is a compass point.
            let point = if case .compass(let gravity)? = gravity { gravity.point } else { Gravity.centre.point }
            let colour = try background.map { text throws(ParameterError) in
                try Colour.parameter("background", of: "downsample", text)
            }
            padding = (colour?.rgba ?? [0, 0, 0, 0], point.x, point.y)
        } else {
            padding = nil
        }
        enlarge = p[\Keys.enlarge]
        draft = p[\Keys.shrinkOnLoad] == .speed
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "downsample")
        let (width, height, padding, enlarge, draft) = (width, height, padding, enlarge ? Int32(1) : 0, draft)
        let (byRegions, wasCrop) = (byRegions, crop)
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            let geometry = image.regions.map { _ in ResizeGeometry(image, box: (width, height), enlarge: enlarge != 0) }
            var crop = wasCrop
            if byRegions, let geometry, let regions = image.regions,
                let point = RegionFraming.focus(of: regions, window: geometry.coverWindow)
            {
                crop = ph_crop(mode: PH_CROP_AT, x: point.x, y: point.y)
            }
            var resized: VipsImageHandle
            if draft, let bytes = image.undecodedBytes, image.gif?.opaque == true {
                // GIF has no shrink on load: its frames are opened without their alpha, and
                // resized in 8 bits rather than premultiplied floats.
                resized = try image.prepared().derive("downsample") {
                    ph_vips_thumbnail_gif_frames($0, bytes.baseAddress, bytes.count, width, height, crop, enlarge, &$1)
                }
            } else if draft, let kept = image.draft, let bytes = image.undecodedBytes,
                kept.shrink
                    <= ph_vips_jpeg_draft_shrink(
                        bytes.baseAddress, bytes.count, width, height, crop.mode == PH_CROP_NONE ? 0 : 1)
            {
                // A stage before (faces) decoded the JPEG at this scale or finer: resized from
                // that, as the draft thumbnail would resize what it decodes.
                resized = try kept.handle.derive("downsample") {
                    ph_vips_thumbnail_image($0, width, height, crop, enlarge, &$1)
                }
            } else if let bytes = image.undecodedBytes {
                var out: UnsafeMutablePointer<VipsImage>?
                let thumbnail = draft ? ph_vips_thumbnail_buffer_draft : ph_vips_thumbnail_buffer
                let errors = VipsErrorMark()
                guard thumbnail(bytes.baseAddress, bytes.count, width, height, crop, enlarge, image.frames, &out) == 0,
                    let out
                else {
                    throw PipelineError(.decodeFailed, "downsample failed: \(errors.messages)")
                }
                resized = VipsImageHandle(out, keeping: bytes)
            } else {
                resized = try image.handle.derive("downsample") {
                    ph_vips_thumbnail_image($0, width, height, crop, enlarge, &$1)
                }
            }
            resized = try resized.derive("sRGB conversion") { ph_vips_to_srgb($0, &$1) }
            if let padding {
                resized = try resized.derive("contain padding") {
                    ph_vips_pad($0, width, height, padding.x, padding.y, padding.rgba, &$1)
                }
            }
            // Decoded here, not lazily in encode: the result may be shared by several profiles,
            // and this stage's time is then the decode time.
            let decoded = try image.materialized("downsample", resized)
            let regions = image.regions.flatMap { geometry?.mapping($0, crop: crop, padding: padding) }
            return .image(image.derived(decoded, regions: regions))
        }
    }
}
