import CVips
import PipelineHost

/// Opens encoded bytes lazily: sniffs them, reads the header, checks the pixel limit. No pixel is
/// decoded here; the next stage decides how (shrink-on-load when it can).
struct DecodeStage: Stage {
    struct Keys: ParameterList {
        let maxPixels = Parameter<Double>(
            "max_pixels", .number(1...1e10), default: 100e6,
            doc: "largest width x height x frames decoded, checked from the header")
        // No default written here, so the keys of existing profiles stay; unset means 50e6.
        let maxOutputPixels = OptionalParameter<Double>(
            "max_output_pixels", .number(1...EncodeStage.costBudget),
            doc:
                "largest width x height x frames any later stage may make (pad, enlarge, dpr...), checked before its pixels are computed; unset: 50e6; at most the encode budget"
        )
        let maxFrames = Parameter<Int>(
            "max_frames", .integer(1...100_000), default: 1000,
            doc: "files with more frames (pages) than this are refused, even when only the first is used")
        let frames = Parameter<Int>(
            "frames", .integer(1...1000), default: 1,
            doc:
                "frames of animated input to keep, the first N (1: a still); left out: \(DecodeStage.animatedFrames) when encode keeps "
                + "animations (format webp, gif, avif, auto or source, or animation_format written), else 1; fewer when N frames would pass max_pixels"
        )
        let formats = Parameter<[String]>(
            "formats", .stringList, default: DecodeStage.defaultFormats,
            doc:
                "image formats accepted, by libvips loader name; others are unsupported_format. Also: jxl (its loader is unblocked when listed), jp2k, rad, ppm, fits, svg, pdf, magick (svg, pdf and magick stay blocked as untrusted)"
        )
    }

    static let definition = StageDefinition(
        name: "decode",
        // 2: an embedded ICC profile is applied (the pixels become sRGB), so every variant made
        // from a CMYK, Display-P3 or Adobe RGB source changes colour, and its key with it.
        version: 2,
        summary: "Open the image lazily with libvips: sniff the bytes (HTML or XML is 'not an image'), "
            + "read the header and check max_pixels and max_frames before any pixel is decoded. "
            + "Animated input keeps its frames when encode can animate (see frames), else gives its first frame.",
        input: .encoded, output: .image,
        capabilities: StageCapabilities(animation: .opensFrames(parameter: "frames", whenAnimated: animatedFrames)),
        parameters: Keys.specs,
        make: { parameters in
            let formats = parameters[\Keys.formats]
            for format in formats where !DecodeStage.knownFormats.contains(format) {
                throw ParameterError(
                    "formats: '\(format)' is not a libvips loader; choose from \(DecodeStage.knownFormats.joined(separator: ", "))"
                )
            }
            return DecodeStage(
                maxPixels: parameters[\Keys.maxPixels], maxFrames: parameters[\Keys.maxFrames],
                frames: parameters[\Keys.frames], formats: Set(formats),
                maxOutputPixels: parameters[\Keys.maxOutputPixels] ?? VipsPipelineImage.defaultPixelLimit)
        })

    /// The frames an animation keeps when the profile's output animates and leaves `frames`
    /// out: most animations whole (a GIF of 10 s at 25 frames a second), while the work of one
    /// request stays bounded by the count as well as by max_pixels.
    static let animatedFrames = 250

    /// Formats libvips has no loader of its own for (ImageMagick's stays blocked).
    static let onlyThroughImageMagick: Set<String> = ["bmp", "ico"]

    /// What a photo or cover pipeline meets; heif covers AVIF too.
    static let defaultFormats = ["jpeg", "png", "webp", "gif", "heif", "tiff"]
    static let knownFormats = defaultFormats + ["jp2k", "jxl", "rad", "ppm", "fits", "svg", "pdf", "magick"]

    let maxPixels: Double
    let maxFrames: Int
    let frames: Int
    let formats: Set<String>
    let maxOutputPixels: Double

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard case .encoded(let encoded) = input else {
            throw PipelineError(.stageFailed, "decode: expected encoded bytes")
        }
        try VipsRuntime.start()
        if formats.contains("jxl") { VipsRuntime.allowJXLInput() }
        if formats.contains("magick") { VipsRuntime.openImageMagickModule() }
        let bytes = encoded.bytes
        switch Sniffer.sniff(bytes.prefix(1024)) {
        case .empty:
            throw PipelineError(.notAnImage, "not an image (empty body)", details: DecodeFailure(sniffedType: "empty"))
        case .text(let mediaType):
            throw PipelineError(
                .notAnImage, "not an image (\(mediaType))", details: DecodeFailure(sniffedType: mediaType))
        case .image(let format) where Self.onlyThroughImageMagick.contains(format):
            // This libvips reads them only through its ImageMagick loader, blocked as untrusted.
            throw PipelineError(
                .unsupportedFormat,
                "image format '\(format)' cannot be loaded: this libvips reads \(format.uppercased()) "
                    + "only through ImageMagick, which stays blocked as untrusted")
        case .image, .unknown:
            break
        }
        let (maxPixels, maxFrames, wanted, formats, outputLimit) = (
            maxPixels, maxFrames, frames, formats, maxOutputPixels
        )
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            let format = try Self.checkFormat(bytes, allowed: formats, maxFrames: maxFrames)
            let errors = VipsErrorMark()
            guard let image = ph_vips_open(bytes.baseAddress, bytes.count, 1) else {
                throw PipelineError(.decodeFailed, "cannot read the image header: \(errors.messages)")
            }
            let first = VipsImageHandle(image, keeping: bytes)
            let size = first.size
            let pages = Int(ph_vips_page_count(image))
            guard pages <= maxFrames else {
                // libvips' GIF loader stops counting at 4097: the file has that many or more.
                let count =
                    Self.countsNoFurther[format].map { pages > $0 ? "more than \($0)" : "\(pages)" } ?? "\(pages)"
                throw PipelineError(.pixelLimit, "image has \(count) frames, over max_frames (\(maxFrames))")
            }
            if let counted = Self.countsNoFurther[format], pages > counted {
                throw PipelineError(
                    .pixelLimit,
                    "image has more than \(counted) frames, more than libvips' \(format) loader counts (max_frames \(maxFrames))"
                )
            }
            let framePixels = Double(size.width) * Double(size.height)
            guard framePixels <= maxPixels else {
                let what = pages > 1 ? "\(size) a frame" : "\(size)"
                throw PipelineError(
                    .pixelLimit,
                    "image is \(what) (\(megapixels(framePixels))), over max_pixels (\(megapixels(maxPixels)))")
            }
            // An animation keeps the first frames that fit in max_pixels: a shorter animation
            // rather than none.
            let frames = Self.framesKept(wanted: wanted, pages: pages, framePixels: framePixels, maxPixels: maxPixels)
            let handle = frames > 1 ? try Self.open(bytes, frames: frames) : first
            let sourceFormat = ImageFacts(handle: first).format
            return .image(
                VipsPipelineImage(
                    handle: handle, undecodedBytes: bytes, frames: Int32(frames), sourceSize: size,
                    pixelLimit: outputLimit, predictedPeakBytes: DecodeCost(first, frames: frames).bytes,
                    sourceFormat: sourceFormat,
                    gif: sourceFormat == "gif" ? GIFFacts(bytes, frames: frames) : nil))
        }
    }

    /// The frames decode keeps: the first `wanted`, no more than the file has, and no more than
    /// fit in `maxPixels` together (at least one: a frame over it alone is refused before).
    static func framesKept(wanted: Int, pages: Int, framePixels: Double, maxPixels: Double) -> Int {
        max(1, min(wanted, pages, Int(min(Double(Int.max / 2), (maxPixels / max(1, framePixels)).rounded(.down)))))
    }

    /// Refuses formats outside the allowlist or blocked in libvips, and TIFFs with more pages
    /// than max_frames before libvips reads their headers: its TIFF loader reads every page's
    /// directory to count them, which takes seconds for 50,000 pages.
    /// Loaders that stop counting frames: libvips' GIF loader (libnsgif) warns "Excessive
    /// number of frames" and reports 4097 for any GIF with more than 4096.
    static let countsNoFurther = ["gif": 4096]

    /// Returns the format's loader name.
    private static func checkFormat(_ bytes: ImageBytes, allowed: Set<String>, maxFrames: Int) throws(PipelineError)
        -> String
    {
        var name = [CChar](repeating: 0, count: 64)
        var blocked: Int32 = 0
        let found = ph_vips_loader_format(bytes.baseAddress, bytes.count, &name, name.count, &blocked) != 0
        let format = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard found else { throw PipelineError(.unsupportedFormat, "unsupported image format") }
        guard allowed.contains(format) else {
            throw PipelineError(
                .unsupportedFormat,
                "image format '\(format)' is not accepted (decode formats: \(allowed.sorted().joined(separator: ", ")))"
            )
        }
        guard blocked == 0 else {
            throw PipelineError(
                .unsupportedFormat, "image format '\(format)' is blocked: libvips' \(format) loader is untrusted")
        }
        if format == "tiff",
            Int(ph_tiff_page_count(bytes.baseAddress, bytes.count, Int32(clamping: maxFrames))) > maxFrames
        {
            throw PipelineError(.pixelLimit, "image has more than \(maxFrames) frames, over max_frames (\(maxFrames))")
        }
        return format
    }

    private static func open(_ bytes: ImageBytes, frames: Int) throws(PipelineError) -> VipsImageHandle {
        let errors = VipsErrorMark()
        guard let image = ph_vips_open(bytes.baseAddress, bytes.count, Int32(frames)) else {
            throw PipelineError(.decodeFailed, "cannot read \(frames) frames: \(errors.messages)")
        }
        return VipsImageHandle(image, keeping: bytes)
    }
}

/// "12 megapixels", "3.5 megapixels": for limit messages.
func megapixels(_ pixels: Double) -> String {
    let value = pixels / 1e6
    return value >= 10 ? "\(Int(value.rounded())) megapixels" : "\((value * 10).rounded() / 10) megapixels"
}
