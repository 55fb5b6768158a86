import CVips
import PipelineHost

/// Opens encoded bytes lazily: sniffs them, reads the header, checks the pixel limit. No pixel is
/// decoded here; the next stage decides how (shrink-on-load when it can).
struct DecodeStage: Stage {
    static let definition = StageDefinition(
        name: "decode",
        summary: "Open the image lazily with libvips: sniff the bytes (HTML or XML is 'not an image'), "
            + "read the header and check max_pixels before any pixel is decoded.",
        input: .encoded, output: .image,
        parameters: [
            ParameterSpec("max_pixels", .number(1...1e10), default: .number(100e6),
                          doc: "largest width x height accepted, checked from the header"),
        ],
        make: { DecodeStage(maxPixels: $0.number("max_pixels")!) })

    let maxPixels: Double

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
        let maxPixels = maxPixels
        return try await context.runBlocking { () throws(PipelineError) -> StageValue in
            guard ph_vips_find_loader(bytes.baseAddress, bytes.count) != nil else {
                _ = VipsRuntime.takeError()
                throw PipelineError(.unsupportedFormat, "unsupported image format")
            }
            guard let image = ph_vips_open(bytes.baseAddress, bytes.count) else {
                throw PipelineError(.decodeFailed, "cannot read the image header: \(VipsRuntime.takeError())")
            }
            let handle = VipsImageHandle(image, keeping: bytes)
            let size = handle.size
            let pixels = Double(size.width) * Double(size.height)
            guard pixels <= maxPixels else {
                throw PipelineError(.pixelLimit, "image is \(size) (\(megapixels(pixels))), over max_pixels (\(megapixels(maxPixels)))")
            }
            return .image(VipsPipelineImage(handle: handle, undecodedBytes: bytes, sourceSize: size))
        }
    }

    private func megapixels(_ pixels: Double) -> String {
        let value = pixels / 1e6
        return value >= 10 ? "\(Int(value.rounded())) megapixels" : "\((value * 10).rounded() / 10) megapixels"
    }
}
