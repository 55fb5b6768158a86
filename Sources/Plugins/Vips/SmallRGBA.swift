import CVips
import PipelineHost
import PlaceholderHashes

extension VipsPipelineImage {
    /// The image shrunk to fit `side` × `side`, upright and in sRGB, as 8-bit RGBA: what the
    /// placeholders and the dominant colour read. An image decode has only opened is shrunk on
    /// load at the smallest DCT scale that covers the box, as downsample's speed path does (a
    /// progressive JPEG without the scans that scale never reads), so the full pixels are never made.
    func smallRGBA(fitting side: Int) throws(PipelineError) -> RGBAImage {
        let small = try smallImage(fitting: side)
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
        let box = Int32(side), none = ph_crop(mode: PH_CROP_NONE, x: 0.5, y: 0.5)
        var small: VipsImageHandle
        if let bytes = undecodedBytes {
            var out: UnsafeMutablePointer<VipsImage>?
            let errors = VipsErrorMark()
            guard ph_vips_thumbnail_buffer_draft(bytes.baseAddress, bytes.count, box, box, none, 0, 1, &out) == 0,
                let out
            else {
                throw PipelineError(.decodeFailed, "decode failed: \(errors.messages)")
            }
            small = VipsImageHandle(out, keeping: bytes)
        } else {
            small = try handle.derive("shrink") { ph_vips_thumbnail_image($0, box, box, none, 0, &$1) }
        }
        return try small.derive("sRGB conversion") { ph_vips_to_srgb($0, &$1) }
    }
}
