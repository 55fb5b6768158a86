import CVips
import PipelineHost
import PlaceholderHashes

extension VipsPipelineImage {
    /// The image shrunk to fit `side` × `side`, upright and in sRGB, as 8-bit RGBA: what the
    /// placeholders and the dominant colour read. An image decode has only opened is shrunk on
    /// load at the smallest DCT scale that covers the box, as downsample's speed path does (a
    /// progressive JPEG without the scans that scale never reads), so the full pixels are never made.
    func smallRGBA(fitting side: Int) throws(PipelineError) -> RGBAImage {
        try rgba(of: try smallImage(fitting: side))
    }

    /// A small image's pixels as 8-bit RGBA.
    func rgba(of small: VipsImageHandle) throws(PipelineError) -> RGBAImage {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let errors = VipsErrorMark()
        guard ph_vips_rgba8(small.pointer, &buffer, &length) == 0, let buffer else {
            throw PipelineError(.decodeFailed, "decode failed: \(errors.messages)")
        }
        defer { ph_vips_free(buffer) }
        let pixels = Array(UnsafeRawBufferPointer(start: buffer, count: length))
        guard
            let image = RGBAImage(
                width: Int(ph_vips_width(small.pointer)), height: Int(ph_vips_height(small.pointer)), pixels: pixels)
        else {
            throw PipelineError(.decodeFailed, "decode failed: \(length) bytes are not an RGBA image")
        }
        return image
    }

    /// The image shrunk to fit `side` × `side`, upright and in sRGB, still lazy.
    func smallImage(fitting side: Int) throws(PipelineError) -> VipsImageHandle {
        guard let bytes = undecodedBytes else { return try shrunk(handle, fitting: side) }
        let box = Int32(side), none = ph_crop(mode: PH_CROP_NONE, x: 0.5, y: 0.5)
        var out: UnsafeMutablePointer<VipsImage>?
        let errors = VipsErrorMark()
        guard ph_vips_thumbnail_buffer_draft(bytes.baseAddress, bytes.count, box, box, none, 0, 1, &out) == 0, let out
        else {
            throw PipelineError(.decodeFailed, "decode failed: \(errors.messages)")
        }
        return try VipsImageHandle(out, keeping: bytes).derive("sRGB conversion") { ph_vips_to_srgb($0, &$1) }
    }

    /// `decoded` shrunk to fit `side` × `side`, upright and in sRGB, still lazy.
    func shrunk(_ decoded: VipsImageHandle, fitting side: Int) throws(PipelineError) -> VipsImageHandle {
        let box = Int32(side), none = ph_crop(mode: PH_CROP_NONE, x: 0.5, y: 0.5)
        return try decoded.derive("shrink") { ph_vips_thumbnail_image($0, box, box, none, 0, &$1) }
            .derive("sRGB conversion") { ph_vips_to_srgb($0, &$1) }
    }

    /// A single-frame JPEG decoded, in memory, at the DCT scale that covers `side` x `side`
    /// (as the draft thumbnail loads it), still in the file's orientation; nil for other images,
    /// and for JPEGs too small to scale.
    func jpegDraft(fitting side: Int) throws(PipelineError) -> (handle: VipsImageHandle, shrink: Int32)? {
        guard let bytes = undecodedBytes, frames == 1 else { return nil }
        let shrink = ph_vips_jpeg_draft_shrink(bytes.baseAddress, bytes.count, Int32(side), Int32(side), 0)
        guard shrink > 1 else { return nil }
        var loaded: UnsafeMutablePointer<VipsImage>?
        let errors = VipsErrorMark()
        guard ph_vips_jpeg_draft(bytes.baseAddress, bytes.count, shrink, &loaded) == 0, let loaded else {
            throw PipelineError(.decodeFailed, "decode failed: \(errors.messages)")
        }
        let draft = try VipsImageHandle(loaded, keeping: bytes).derive("decode") { ph_vips_copy_memory($0, &$1) }
        return (draft, shrink)
    }
}
