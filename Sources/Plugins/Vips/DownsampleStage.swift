import CVips
import PipelineHost

/// Resizes to fit a box. While the image is still undecoded this is libvips' shrink-on-load
/// thumbnail from the encoded bytes, so a 5120x2880 JPEG is never decoded at full size.
struct DownsampleStage: Stage {
    static let definition = StageDefinition(
        name: "downsample",
        summary: "Resize to fit a box with shrink-on-load (vips_thumbnail_buffer), honouring EXIF "
            + "orientation and converting to sRGB.",
        input: .image, output: .image, role: .decode,
        parameters: [
            ParameterSpec("size", .integer(1...16384), doc: "longest side in pixels (or give width and/or height)"),
            ParameterSpec("width", .integer(1...16384), doc: "box width in pixels"),
            ParameterSpec("height", .integer(1...16384), doc: "box height in pixels"),
            ParameterSpec("fit", .choice(["inside", "cover"]), default: .string("inside"),
                          doc: "inside: keep all of the image; cover: fill the box and crop the centre"),
            ParameterSpec("enlarge", .boolean, default: .boolean(false),
                          doc: "also scale images up that are smaller than the box"),
            ParameterSpec("shrink_on_load", .choice(["quality", "speed"]), default: .string("quality"),
                          doc: "quality: libvips' choice, a JPEG decoded at twice the box or more; speed: at the "
                              + "smallest JPEG scale that covers the box, as PIL's draft mode and thumbor do"),
        ],
        make: { try DownsampleStage($0) })

    /// Used for a side the profile leaves open ("width = 300" alone).
    private static let unbounded: Int32 = 10_000_000

    let width: Int32
    let height: Int32
    let fit: ph_fit
    let enlarge: Bool
    let draft: Bool

    init(_ p: StageParameters) throws(ParameterError) {
        let size = p.integer("size"), width = p.integer("width"), height = p.integer("height")
        if size != nil, width != nil || height != nil {
            throw ParameterError("give either size or width/height, not both")
        }
        guard size != nil || width != nil || height != nil else {
            throw ParameterError("needs size, or width and/or height, like downsample { size = 300 }")
        }
        fit = p.string("fit") == "cover" ? PH_FIT_COVER : PH_FIT_INSIDE
        if fit == PH_FIT_COVER, size == nil, width == nil || height == nil {
            throw ParameterError("fit = \"cover\" needs both width and height, or size")
        }
        self.width = Int32(size ?? width ?? Int(Self.unbounded))
        self.height = Int32(size ?? height ?? Int(Self.unbounded))
        enlarge = p.boolean("enlarge")!
        draft = p.string("shrink_on_load") == "speed"
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "downsample")
        let (width, height, fit, enlarge, draft) = (width, height, fit, enlarge ? Int32(1) : 0, draft)
        return try await context.runBlocking { () throws(PipelineError) -> StageValue in
            let resized: VipsImageHandle
            if let bytes = image.undecodedBytes {
                var out: UnsafeMutablePointer<VipsImage>?
                let thumbnail = draft ? ph_vips_thumbnail_buffer_draft : ph_vips_thumbnail_buffer
                guard thumbnail(bytes.baseAddress, bytes.count, width, height, fit, enlarge, image.frames, &out) == 0,
                      let out else {
                    throw PipelineError(.decodeFailed, "downsample failed: \(VipsRuntime.takeError())")
                }
                resized = VipsImageHandle(out, keeping: bytes)
            } else {
                resized = try image.handle.derive("downsample") { ph_vips_thumbnail_image($0, width, height, fit, enlarge, &$1) }
            }
            let srgb = try resized.derive("sRGB conversion") { ph_vips_to_srgb($0, &$1) }
            // Decoded here, not lazily in encode: the result may be shared by several profiles,
            // and this stage's time is then the decode time.
            let decoded = try image.materialized("downsample", srgb)
            return .image(VipsPipelineImage(handle: decoded, undecodedBytes: nil, sourceSize: image.sourceSize))
        }
    }
}
