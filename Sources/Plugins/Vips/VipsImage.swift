import CVips
import PipelineHost

/// Owns one reference to a VipsImage. A VipsImage is immutable once built and libvips allows
/// using it from any thread; this class only releases it in deinit, hence @unchecked Sendable.
///
/// libvips reads encoded input lazily, so an image made from bytes must keep those bytes alive:
/// `keeping` holds them for as long as this image or any image derived from it exists.
final class VipsImageHandle: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<VipsImage>
    let keeping: ImageBytes?

    init(_ pointer: UnsafeMutablePointer<VipsImage>, keeping: ImageBytes?) {
        self.pointer = pointer
        self.keeping = keeping
    }

    deinit { ph_vips_unref(pointer) }

    /// The size of one frame: an animation is held as one tall image of stacked frames.
    var size: PixelSize { PixelSize(width: Int(ph_vips_width(pointer)), height: Int(ph_vips_page_height(pointer))) }

    /// Runs one libvips operation that writes a new image, keeping this image's bytes alive.
    func derive(
        _ operation: String, as kind: PipelineError.Kind = .decodeFailed,
        _ body: (UnsafeMutablePointer<VipsImage>, inout UnsafeMutablePointer<VipsImage>?) -> Int32
    )
        throws(PipelineError) -> VipsImageHandle
    {
        var out: UnsafeMutablePointer<VipsImage>?
        let errors = VipsErrorMark()
        guard body(pointer, &out) == 0, let out else {
            throw PipelineError(kind, "\(operation) failed: \(errors.messages)")
        }
        return VipsImageHandle(out, keeping: keeping)
    }
}

/// The image value the vips stages pass along.
struct VipsPipelineImage: PipelineImage {
    let handle: VipsImageHandle
    /// Set while only the header has been read: downsample can then shrink on load from these bytes.
    let undecodedBytes: ImageBytes?
    /// Frames to load from `undecodedBytes` (1 for still images and the first-frame default).
    var frames: Int32 = 1
    let sourceSize: PixelSize
    /// The most pixels (all frames) any stage may make from this image: decode's
    /// max_output_pixels, carried along so every later stage, a plugin's too, is held to it.
    var pixelLimit: Double = VipsPipelineImage.defaultPixelLimit
    /// Set by decode from the header (`DecodeCost`); the images later stages make draw nothing more.
    var predictedPeakBytes = 0
    /// The format the source was in ("jpeg", "avif", "tiff", ...: `ImageFacts.format`), for
    /// encode's format = "source".
    var sourceFormat = "unknown"
    /// A GIF source's palettes and opacity, from its blocks.
    var gif: GIFFacts?
    /// The parts a plugin's stage found (faces), in fractions of this image; nil when none
    /// looked. A stage that moves pixels drops them unless it maps them (downsample does).
    var regions: [ImageRegion]?
    /// A JPEG decoded at a DCT scale by a stage that looked at a small copy (faces), kept so
    /// downsample resizes from it rather than decode the file again: `shrink` is its scale.
    var draft: (handle: VipsImageHandle, shrink: Int32)?

    /// 50 megapixels: a 64 x 40 input padded to 16384 x 16384 would otherwise be 268.
    static let defaultPixelLimit = 50e6

    var size: PixelSize { handle.size }

    /// The frames the image holds: 1 for a still, the stacked frames of an animation.
    var frameCount: Int { Int(ph_vips_height(handle.pointer)) / max(1, size.height) }

    /// A later stage's result, decoded into `handle`, with what this image carries along (its
    /// source's size, format and GIF facts, and the pixel limit).
    func derived(_ handle: VipsImageHandle, regions: [ImageRegion]? = nil) -> VipsPipelineImage {
        VipsPipelineImage(
            handle: handle, undecodedBytes: nil, sourceSize: sourceSize, pixelLimit: pixelLimit,
            sourceFormat: sourceFormat, gif: gif, regions: regions)
    }

    /// The image upright and in sRGB, ready for pixel work or encoding. A no-op for images that
    /// have been through downsample, which already did both.
    ///
    /// An undecoded image is opened afresh: the header-only image decode made is read
    /// sequentially, which works once, and the pipeline may hand one decode to several stages.
    func prepared() throws(PipelineError) -> VipsImageHandle {
        guard let bytes = undecodedBytes else { return handle }
        let errors = VipsErrorMark()
        guard let opened = ph_vips_open(bytes.baseAddress, bytes.count, frames) else {
            throw PipelineError(.decodeFailed, "cannot read the image: \(errors.messages)")
        }
        var upright = try VipsImageHandle(opened, keeping: bytes).derive("autorotate") { ph_vips_autorotate($0, &$1) }
        if gif?.opaque == true { upright = try upright.derive("opaque GIF") { ph_vips_drop_alpha($0, &$1) } }
        return try upright.derive("sRGB conversion") { ph_vips_to_srgb($0, &$1) }
    }

    /// Computes the image into memory, so the stages after this one (for several requests,
    /// on several threads) can all read it. Every stage's result passes here, still lazy: a
    /// result over `pixelLimit` is refused before any of its pixels is computed.
    func materialized(_ operation: String, _ handle: VipsImageHandle) throws(PipelineError) -> VipsImageHandle {
        let (width, height) = (Double(ph_vips_width(handle.pointer)), Double(ph_vips_height(handle.pointer)))
        guard width * height <= pixelLimit else {
            throw PipelineError(
                .pixelLimit,
                "\(operation) would make \(Int(width))x\(Int(height)) "
                    + "(\(megapixels(width * height))), over max_output_pixels (\(megapixels(pixelLimit)))")
        }
        return try handle.derive(operation) { ph_vips_copy_memory($0, &$1) }
    }
}

extension StageValue {
    /// The vips image this value holds, or a clear error naming the stage.
    func vipsImage(for stage: String) throws(PipelineError) -> VipsPipelineImage {
        guard case .image(let image) = self, let image = image as? VipsPipelineImage else {
            throw PipelineError(.stageFailed, "\(stage): expected an image from the vips decode stage")
        }
        return image
    }
}
