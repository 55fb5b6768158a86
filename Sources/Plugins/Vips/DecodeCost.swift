import CVips
import PipelineHost

/// The most memory decoding an image may take, predicted from its header, for the memory budget
/// (`PipelineImage.predictedPeakBytes`). It errs high: a prediction too low lets a burst past
/// the budget, one too high only makes work wait.
///
/// - A progressive JPEG is decoded through a buffer of every DCT coefficient, 2 bytes each, at
///   whatever scale it is shrunk on load: width x height x 2 per full-resolution band (a chroma
///   band at 4:2:0 is a quarter of one).
/// - Interlaced PNG, GIF, WebP, HEIF and AVIF, TIFF, and every format not named here, are
///   decoded whole: width x height x bands x bytes per band, for each frame.
/// - Baseline JPEG and plain PNG are read in strips, shrunk as they come: a few hundred lines.
/// Each adds `working`, for what the later stages make at display sizes.
struct DecodeCost: Equatable {
    let loader: String
    let width: Int
    let height: Int
    let bands: Int
    let bytesPerBand: Int
    let frames: Int
    /// A progressive JPEG (libvips' jpeg-multiscan), or an interlaced PNG or GIF.
    let interlaced: Bool
    /// libvips' jpeg-chroma-subsample: "4:2:0", "4:2:2", "4:4:4"...
    let chroma: String?

    /// What the later stages of a display-size pipeline take besides the decode.
    static let working = 8 << 20
    /// Lines a strip-wise decode holds, with libvips' line caches for shrinking.
    static let stripLines = 256

    var bytes: Int {
        let pixels = Double(width) * Double(height)
        let decode: Double
        switch (loader, interlaced) {
        case ("jpegload", true):
            decode = pixels * 2 * (1 + Double(max(0, bands - 1)) * chromaShare)
        case ("pngload", true):
            decode = pixels * Double(bands * bytesPerBand)
        case ("jpegload", false), ("pngload", false):
            decode = Double(width) * Double(bands * bytesPerBand) * Double(Self.stripLines)
        default:
            decode = pixels * Double(max(bands, 4) * bytesPerBand) * Double(max(1, frames))
        }
        return Int(min(decode, 1e15)) + Self.working
    }

    /// A chroma band's size against the luma band's.
    private var chromaShare: Double {
        switch chroma {
        case "4:2:0": 0.25
        case "4:2:2", "4:4:0": 0.5
        default: 1
        }
    }
}

extension DecodeCost {
    /// The prediction for an image libvips opened (its header only).
    init(_ handle: VipsImageHandle, frames: Int) {
        let image = handle.pointer
        let loader = ph_vips_field_string(image, "vips-loader").map { text in
            defer { ph_vips_free(text) }
            return String(cString: text)
        }
        let chroma = ph_vips_field_string(image, "jpeg-chroma-subsample").map { text in
            defer { ph_vips_free(text) }
            return String(cString: text)
        }
        self.init(
            // "jpegload_buffer" and "jpegload_source" decode as "jpegload" does.
            loader: String((loader ?? "").split(separator: "_").first ?? ""), width: Int(ph_vips_width(image)),
            height: Int(ph_vips_page_height(image)),
            bands: Int(vips_image_get_bands(image)),
            bytesPerBand: Int(vips_format_sizeof(vips_image_get_format(image))),
            frames: frames,
            interlaced: ph_vips_field_int(image, "jpeg-multiscan", 0) != 0
                || ph_vips_field_int(image, "interlaced", 0) != 0,
            chroma: chroma)
    }
}
