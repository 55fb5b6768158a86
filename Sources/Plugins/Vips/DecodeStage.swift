import CVips
import PipelineHost

/// Opens encoded bytes lazily: sniffs them, reads the header, checks the pixel limit. No pixel is
/// decoded here; the next stage decides how (shrink-on-load when it can).
struct DecodeStage: Stage {
    static let definition = StageDefinition(
        name: "decode",
        summary: "Open the image lazily with libvips: sniff the bytes (HTML or XML is 'not an image'), "
            + "read the header and check max_pixels and max_frames before any pixel is decoded. "
            + "Animated input gives its first frame unless frames asks for more.",
        input: .encoded, output: .image,
        parameters: [
            ParameterSpec("max_pixels", .number(1...1e10), default: .number(100e6),
                          doc: "largest width x height x frames decoded, checked from the header"),
            ParameterSpec("max_frames", .integer(1...100_000), default: .integer(1000),
                          doc: "files with more frames (pages) than this are refused, even when only the first is used"),
            ParameterSpec("frames", .integer(1...1000), default: .integer(1),
                          doc: "frames of animated input to keep (1: the first); more make an animation for webp output"),
        ],
        make: { DecodeStage(maxPixels: $0.number("max_pixels")!, maxFrames: $0.integer("max_frames")!,
                            frames: $0.integer("frames")!) })

    let maxPixels: Double
    let maxFrames: Int
    let frames: Int

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard case .encoded(let encoded) = input else { throw PipelineError(.stageFailed, "decode: expected encoded bytes") }
        try VipsRuntime.start()
        let bytes = encoded.bytes
        switch Sniffer.sniff(bytes.prefix(1024)) {
        case .empty:
            throw PipelineError(.notAnImage, "not an image (empty body)", sniffedType: "empty")
        case .text(let mediaType):
            throw PipelineError(.notAnImage, "not an image (\(mediaType))", sniffedType: mediaType)
        case .image, .unknown:
            break
        }
        let (maxPixels, maxFrames, wanted) = (maxPixels, maxFrames, frames)
        return try await context.runBlocking { () throws(PipelineError) -> StageValue in
            guard ph_vips_find_loader(bytes.baseAddress, bytes.count) != nil else {
                _ = VipsRuntime.takeError()
                throw PipelineError(.unsupportedFormat, "unsupported image format")
            }
            guard let image = ph_vips_open(bytes.baseAddress, bytes.count, 1) else {
                throw PipelineError(.decodeFailed, "cannot read the image header: \(VipsRuntime.takeError())")
            }
            let first = VipsImageHandle(image, keeping: bytes)
            let size = first.size
            let pages = Int(ph_vips_page_count(image))
            guard pages <= maxFrames else {
                throw PipelineError(.pixelLimit, "image has \(pages) frames, over max_frames (\(maxFrames))")
            }
            let frames = min(wanted, pages)
            let pixels = Double(size.width) * Double(size.height) * Double(frames)
            guard pixels <= maxPixels else {
                let what = frames > 1 ? "\(size) x \(frames) frames" : "\(size)"
                throw PipelineError(.pixelLimit, "image is \(what) (\(megapixels(pixels))), over max_pixels (\(megapixels(maxPixels)))")
            }
            let handle = frames > 1 ? try Self.open(bytes, frames: frames) : first
            return .image(VipsPipelineImage(handle: handle, undecodedBytes: bytes, frames: Int32(frames), sourceSize: size))
        }
    }

    private static func open(_ bytes: ImageBytes, frames: Int) throws(PipelineError) -> VipsImageHandle {
        guard let image = ph_vips_open(bytes.baseAddress, bytes.count, Int32(frames)) else {
            throw PipelineError(.decodeFailed, "cannot read \(frames) frames: \(VipsRuntime.takeError())")
        }
        return VipsImageHandle(image, keeping: bytes)
    }

    private func megapixels(_ pixels: Double) -> String {
        let value = pixels / 1e6
        return value >= 10 ? "\(Int(value.rounded())) megapixels" : "\((value * 10).rounded() / 10) megapixels"
    }
}
