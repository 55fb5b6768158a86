import CVips
import PipelineHost

/// Encodes to JPEG, PNG, WebP, GIF, and (when this libvips has them) AVIF and JPEG XL, stripping
/// metadata by default. Lazy images are computed here, so a damaged source surfaces as a decode
/// error at this step.
///
/// The options added after the first release have no default: left out, they are not part of
/// the stage's identity, so variants made before they existed keep their keys. An option a
/// format does not have is ignored by it (so one profile can say format = "auto").
struct EncodeStage: Stage {
    /// Whether colour is stored at half resolution (jpeg, avif).
    enum ChromaSubsampling: String, ParameterChoice {
        /// Below quality 90.
        case auto
        /// Always.
        case on
        /// Never.
        case off
    }

    /// The `format` a profile writes.
    enum Format: String, ParameterChoice {
        case jpeg, png, webp, gif, avif, jxl
        /// Chosen per request from what the viewer accepts (an override); jpeg without one.
        case auto
        /// The source's own format, where this libvips writes it (`forSource`).
        case source

        /// libvips' saver; auto's and source's are jpeg's until resolved.
        var code: ph_format {
            switch self {
            case .jpeg, .auto, .source: PH_FORMAT_JPEG
            case .png: PH_FORMAT_PNG
            case .webp: PH_FORMAT_WEBP
            case .gif: PH_FORMAT_GIF
            case .avif: PH_FORMAT_AVIF
            case .jxl: PH_FORMAT_JXL
            }
        }
    }

    /// The `animation_format` a profile writes: what an animation becomes.
    enum AnimationFormat: String, ParameterChoice {
        case webp, gif, avif
        /// WebP for a viewer that accepts it, else GIF (an override, as format's auto is).
        case auto
    }

    struct Keys: ParameterList {
        let format = Parameter<Format>(
            "format", default: .jpeg,
            doc:
                "output format; auto follows serve's Accept header or run's --accept (jpeg without); "
                + "source keeps the input's format where this libvips writes it (else png with alpha, jpeg without)")
        let animationFormat = OptionalParameter<AnimationFormat>(
            "animation_format",
            doc:
                "format for an animation (more than one decoded frame): webp, gif, avif, or auto (webp when the viewer accepts it, else gif); "
                + "left out: the format itself when it is webp, gif or avif (or source's gif or webp), auto when format is auto, "
                + "else the first frame as a still in format")
        let quality = Parameter<Int>(
            "quality", .integer(1...100), default: 82,
            doc: "quality for jpeg, webp, avif and jxl")
        let webpQuality = OptionalParameter<Int>(
            "webp_quality", .integer(1...100),
            doc: "quality when the output is webp (quality when left out)")
        let avifQuality = OptionalParameter<Int>(
            "avif_quality", .integer(1...100),
            doc: "quality when the output is avif (quality when left out)")
        let jxlQuality = OptionalParameter<Int>(
            "jxl_quality", .integer(1...100),
            doc: "quality when the output is jxl (quality when left out)")
        let effort = OptionalParameter<Int>(
            "effort", .integer(0...9),
            doc:
                "0 fastest to 9 smallest, fitted to each encoder (webp, avif, jxl; png: zlib's level with adaptive row filters, 0 none; gif: libimagequant's quantization, 0 to 9 as 1 to 10, for frames that do not keep a GIF source's palette); left out: libvips' default, but 2 for avif, 4 for png and 1 for gif"
        )
        let lossless = OptionalParameter<Bool>(
            "lossless", .boolean,
            doc: "keep every pixel exactly (webp, avif, jxl)")
        let progressive = OptionalParameter<Bool>(
            "progressive", .boolean,
            doc: "progressive jpeg, interlaced png")
        let optimizeCoding = Parameter<Bool>(
            "optimize_coding", .boolean, default: true,
            doc:
                "jpeg: Huffman tables made for each image (2% to a quarter fewer bytes for a little CPU; thumbor and imgproxy do it too)"
        )
        let chromaSubsampling = OptionalParameter<ChromaSubsampling>(
            "chroma_subsampling",
            doc: "halve the colour resolution (jpeg, avif); auto: below quality 90")
        let strip = Parameter<Bool>(
            "strip", .boolean, default: true,
            doc: "drop EXIF, XMP and ICC metadata")
        let keep = OptionalParameter<[String]>(
            "keep", .stringList,
            doc: "metadata strip keeps: { \"icc\" } keeps the colour profile")
    }

    static let definition = StageDefinition(
        name: "encode",
        summary:
            "Encode to jpeg, png, webp, gif, avif or jxl (the last two if this libvips can write them); metadata stripped "
            + "by default. An animation stays one in webp, gif, avif, auto (webp, else gif) and source output, "
            + "or in animation_format; jpeg, png and jxl get its first frame. "
            + "format = \"auto\": avif, webp or jpeg from what the viewer accepts (serve's Accept header, run's --accept); jpeg without. "
            + "format = \"source\": the input's own format (jpeg, png, webp, gif, avif, jxl) where this libvips writes it; "
            + "png for other inputs with alpha (tiff, heic, ...), jpeg for the rest.",
        input: .image, output: .encoded,
        capabilities: StageCapabilities(
            formatParameter: "format",
            animation: .writesFrames(formatParameter: "animation_format", animates: EncodeStage.animates)),
        parameters: Keys.specs,
        make: { try EncodeStage($0) })

    /// The profile's format: `.source` is resolved for each image (`forSource`).
    let chosen: Format
    /// What an animation is written in; nil: its first frame, as a still in `chosen`.
    let animated: Format?
    /// The settings for each format; quality is the format's own (`webp_quality`, ...) if set.
    let options: ph_save_options
    let qualities: [Format: Int32]
    /// The profile's effort, 0 to 9 (`encoderEffort` fits it to each encoder).
    let effort: Int?

    init(_ p: StageParameters) throws {
        // "auto" is resolved per request by serve and run --accept, as an override; without one it is JPEG.
        let chosen = p[\Keys.format] == .auto ? Format.jpeg : p[\Keys.format]
        self.chosen = chosen
        animated = Self.animationFormat(written: p[\Keys.animationFormat], format: p[\Keys.format])
        let keep = p[\Keys.keep] ?? []
        for item in keep where item != "icc" {
            throw ParameterError("encode: 'keep' takes { \"icc\" }, got \"\(item)\"")
        }
        let quality = p[\Keys.quality]
        qualities = [Format.webp, .avif, .jxl].reduce(into: [:]) { qualities, format in
            qualities[format] = Int32(p.integer("\(format.rawValue)_quality") ?? quality)
        }
        let subsample =
            switch p[\Keys.chromaSubsampling] ?? .auto {
            case .on: PH_SUBSAMPLE_ON
            case .off: PH_SUBSAMPLE_OFF
            case .auto: PH_SUBSAMPLE_AUTO
            }
        options = ph_save_options(
            quality: Int32(quality), strip: p[\Keys.strip] ? 1 : 0, keep_icc: keep.contains("icc") ? 1 : 0,
            effort: 0, lossless: p[\Keys.lossless] == true ? 1 : 0,
            progressive: p[\Keys.progressive] == true ? 1 : 0, subsample: subsample,
            optimize_coding: p[\Keys.optimizeCoding] ? 1 : 0)
        effort = p[\Keys.effort]
        guard chosen == .source || Self.canWrite(chosen) else {
            throw ParameterError("this libvips cannot write \(chosen.rawValue)")
        }
    }

    /// What an animation is written in, from the profile's `animation_format` and `format`
    /// (after a request's choices): nil for a still of its first frame; `.source` for the
    /// source's own format when that animates (`forAnimatedSource`). An "auto" the host did not
    /// resolve is GIF, which every viewer animates, as format's is JPEG.
    static func animationFormat(written: AnimationFormat?, format: Format) -> Format? {
        switch (written, format) {
        case (.webp?, _): .webp
        case (.avif?, _): .avif
        case (.gif?, _), (.auto?, _), (nil, .auto): .gif
        case (nil, .webp), (nil, .gif), (nil, .avif), (nil, .source): format
        case (nil, _): nil
        }
    }

    /// Whether a profile's encode keeps animations animated: the request plan then keeps their
    /// frames (`AnimationRole`), and a still's profile decodes only the first.
    @Sendable static func animates(_ parameters: StageParameters) -> Bool {
        let written = parameters.string("animation_format").flatMap(AnimationFormat.init(rawValue:))
        let format = parameters.string("format").flatMap(Format.init(rawValue:)) ?? .jpeg
        return animationFormat(written: written, format: format) != nil
    }

    /// What format = "source" (or an animation left to it) writes for an animated source:
    /// the source's format when it animates (gif, webp, avif), else nil, a still.
    static func forAnimatedSource(_ source: String) -> Format? {
        switch source {
        case "gif": .gif
        case "webp": .webp
        case "avif": .avif
        default: nil
        }
    }

    /// Debian's libvips always writes JPEG, PNG and WebP. Asking about the others starts
    /// libvips, which a profile load otherwise leaves to the first decode.
    static func canWrite(_ format: Format) -> Bool {
        [.jpeg, .png, .webp].contains(format)
            || ((try? VipsRuntime.start()) != nil && ph_vips_can_save(format.code) != 0)
    }

    /// What format = "source" writes for an input in `source` (`ImageFacts.format`): the same
    /// format where `canWrite` says so, as imgproxy does; else PNG when the image has alpha
    /// (TIFF, HEIC, ...), so transparency is kept, and JPEG for the rest.
    static func forSource(_ source: String, hasAlpha: Bool, canWrite: (Format) -> Bool) -> Format {
        if let same = Format(rawValue: source), ![.auto, .source].contains(same), canWrite(same) { return same }
        return hasAlpha ? .png : .jpeg
    }

    /// The settings for `format`: its own quality and effort.
    func options(for format: Format) -> ph_save_options {
        var settings = options
        settings.quality = qualities[format] ?? options.quality
        settings.effort = Int32(Self.encoderEffort(format, profile: effort))
        return settings
    }

    /// The effort an encoder gets: the profile's 0 (fastest) to 9 (smallest) fitted to the
    /// encoder's range, or, left out, libvips' default, except AVIF's: effort 2 rather than 4
    /// costs a fifth to a sixth of the CPU for 10 to 20% more bytes at equal PSNR (three corpora
    /// of photos at 512 px; BENCHMARKS.md, "AVIF effort"), and GIF's: 1 rather than 7.
    /// Formats without an effort get 0, which they ignore.
    static func encoderEffort(_ format: Format, profile effort: Int?) -> Int {
        let (low, high, fallback) =
            switch format {
            case .webp: (0, 6, 4)
            case .avif: (0, 9, 2)
            case .jxl: (1, 9, 7)
            case .png: (0, 9, 4)
            // libimagequant's effort: at 1 a GIF is quantized in about a third of the time of
            // libvips' default 7, for 2 dB less PSNR, still 2 dB above gifsicle's
            // (BENCHMARKS.md, "Animations").
            case .gif: (1, 10, 1)
            case .jpeg, .auto, .source: (0, 0, 0)
            }
        guard let effort else { return fallback }
        return low + (effort * (high - low) + 4) / 9
    }

    /// What one encode may cost, in JPEG-pixel units: an AV1 encoder at its highest effort
    /// spends about 50 times a JPEG encoder's time per pixel, so a bound on pixels alone lets
    /// one request hold a core for minutes. 100e6 allows 100 megapixels of JPEG (some 3 s and
    /// 300 MB), 33 of PNG, 20 of WebP, 10 of GIF and 6 of AVIF at their default efforts. It holds whatever
    /// max_output_pixels says, and decode's max_output_pixels is itself at most this.
    static let costBudget = 100e6

    /// Cost per pixel against JPEG's, by format and the profile's effort (nil: the default).
    static func costPerPixel(_ format: Format, effort: Int?) -> Double {
        let fitted = encoderEffort(format, profile: effort)
        switch format {
        case .avif: return Double(5 * (1 + fitted))
        case .jxl: return Double(2 * (1 + fitted))
        case .webp: return Double(1 + fitted)
        // zlib's deflate with adaptive filters takes about three times libjpeg-turbo's time at
        // level 4, and more at higher levels.
        case .png: return 2 + Double(fitted) / 4
        // libimagequant's quantizing and dithering of each frame: about 0.3 µs a pixel at effort
        // 1 (ten JPEG pixels) and 1.6 µs at libvips' default 7 (measured on 120 frames of
        // 200 px, ph_gif_save.c), so 250 frames of 200 x 200 fit at effort 1.
        case .gif: return Double(10 * fitted)
        case .jpeg, .auto, .source: return 1
        }
    }

    /// Refuses an encode over the budget from the image's size alone, before any of its pixels
    /// is decoded or computed.
    static func checkCost(of size: PixelSize, frames: Int = 1, format: Format, effort: Int?) throws(PipelineError) {
        let pixels = Double(size.width) * Double(size.height) * Double(frames)
        let perPixel = costPerPixel(format, effort: effort)
        guard pixels * perPixel <= costBudget else {
            throw PipelineError(
                .pixelLimit,
                "encode: \(megapixels(pixels))\(frames > 1 ? " (\(frames) frames)" : "") as \(format.rawValue)"
                    + "\(effort.map { " at effort \($0)" } ?? "") "
                    + "is over the encode budget (\(megapixels(costBudget / perPixel)) at that setting); "
                    + "make the image smaller or lower the effort")
        }
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let image = try input.vipsImage(for: "encode")
        let frames = image.frameCount
        let animation =
            frames > 1 ? (animated == .source ? Self.forAnimatedSource(image.sourceFormat) : animated) : nil
        let output =
            animation
            ?? (chosen == .source
                ? Self.forSource(
                    image.sourceFormat, hasAlpha: ph_vips_has_alpha(image.handle.pointer) != 0, canWrite: Self.canWrite)
                : chosen)
        let (format, code, options) = (output.rawValue, output.code, options(for: output))
        // The size is known from the header (upright or not): nothing is computed yet.
        try Self.checkCost(of: image.size, frames: animation == nil ? 1 : frames, format: output, effort: effort)
        let still = animation == nil && frames > 1
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            var ready = try image.prepared()
            if still { ready = try ready.derive("first frame") { ph_vips_first_frame($0, &$1) } }
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            var failure = PH_SAVE_OK
            var settings = options
            let palettes = output == .gif ? image.gif?.palettes ?? [] : []
            let errors = VipsErrorMark()
            let saved = palettes.withUnsafeBufferPointer {
                ph_vips_save(
                    ready.pointer, code, &settings, $0.baseAddress, Int32($0.count), &buffer, &length, &failure)
            }
            guard saved == 0, let buffer else {
                let reason = errors.messages
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
