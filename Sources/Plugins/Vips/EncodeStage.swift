import CVips
import PipelineHost

/// Encodes to JPEG, PNG, WebP or (when this libvips has it) AVIF, stripping metadata by default.
/// Lazy images are computed here, so a damaged source surfaces as a decode error at this step.
struct EncodeStage: Stage {
    static let formats: [(name: String, code: ph_format)] = [
        ("jpeg", PH_FORMAT_JPEG), ("png", PH_FORMAT_PNG), ("webp", PH_FORMAT_WEBP), ("gif", PH_FORMAT_GIF),
        ("avif", PH_FORMAT_AVIF),
    ]

    static let definition = StageDefinition(
        name: "encode",
        summary: "Encode to jpeg, png, webp, gif or avif (if this libvips can write it); metadata stripped by default. "
            + "Several decoded frames (decode { frames = N }) make an animated webp or gif. "
            + "format = \"auto\": serve picks avif, webp or jpeg from the client's Accept header; elsewhere it writes jpeg.",
        input: .image, output: .encoded,
        parameters: [
            ParameterSpec("format", .choice(formats.map(\.name) + ["auto"]), default: .string("jpeg"),
                          doc: "output format; auto follows serve's Accept header (jpeg elsewhere)"),
            ParameterSpec("quality", .integer(1...100), default: .integer(82), doc: "quality for jpeg, webp and avif"),
            ParameterSpec("strip", .boolean, default: .boolean(true), doc: "drop EXIF, XMP and ICC metadata"),
        ],
        make: { try EncodeStage($0) })

    let format: String
    let code: ph_format
    let quality: Int32
    let strip: Bool

    init(_ p: StageParameters) throws {
        // "auto" is resolved per request by serve, as an override; without one it is JPEG.
        let format = p.string("format")! == "auto" ? "jpeg" : p.string("format")!
        self.format = format
        code = Self.formats.first { $0.name == format }!.code
        quality = Int32(p.integer("quality")!)
        strip = p.boolean("strip")!
        // Debian's libvips always writes JPEG, PNG and WebP. Checking the others starts libvips,
        // which a profile load otherwise leaves to the first decode.
        guard ["jpeg", "png", "webp"].contains(format) || ((try? VipsRuntime.start()) != nil && ph_vips_can_save(code) != 0) else {
            throw ParameterError("this libvips cannot write \(format)")
        }
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "encode")
        let (format, code, quality, strip) = (format, code, quality, strip ? Int32(1) : 0)
        return try await context.runBlocking { () throws(PipelineError) -> StageValue in
            let ready = try image.prepared()
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            var failure = PH_SAVE_OK
            guard ph_vips_save(ready.pointer, code, quality, strip, &buffer, &length, &failure) == 0, let buffer else {
                let reason = VipsRuntime.takeError()
                // Pixels are computed while saving, so a damaged source fails here too: the
                // shim says whether producing them failed, or the saver itself.
                let kind: PipelineError.Kind = failure == PH_SAVE_FAILED_INPUT ? .decodeFailed : .encodeFailed
                throw PipelineError(kind, "\(kind == .decodeFailed ? "decode" : "encode") failed: \(reason)")
            }
            let bytes = ImageBytes(adopting: buffer, count: length) { ph_vips_free($0) }
            return .encoded(EncodedImage(bytes: bytes, format: format, size: ready.size, sourceSize: image.sourceSize))
        }
    }
}
