import CVips
import Foundation
import PipelineHost

/// What the header of an opened image says, read from libvips' metadata fields: no pixel is
/// decoded for any of it.
struct ImageFacts {
    let handle: VipsImageHandle

    /// "jpeg", "png", "webp", "gif", "heif", "avif", "tiff", "jxl", ...: the loader that opened
    /// it, with HEIF files whose pictures are AV1 called avif.
    var format: String {
        let loader = string("vips-loader") ?? ""
        let name =
            loader.hasSuffix("load_buffer")
            ? String(loader.dropLast("load_buffer".count))
            : loader.hasSuffix("load") ? String(loader.dropLast("load".count)) : loader
        if name == "heif", string("heif-compression") == "av1" { return "avif" }
        return name.isEmpty ? "unknown" : name
    }

    /// EXIF orientation, 1 (upright) to 8.
    var orientation: Int {
        let value = Int(ph_vips_field_int(handle.pointer, "orientation", 1))
        return (1...8).contains(value) ? value : 1
    }

    /// The size as displayed: orientations 5 to 8 turn the picture a quarter.
    var uprightSize: PixelSize {
        let stored = handle.size
        return orientation >= 5 ? PixelSize(width: stored.height, height: stored.width) : stored
    }

    var frames: Int { Int(ph_vips_page_count(handle.pointer)) }

    /// An animation's timing from its header: how long one pass takes (the sum of its frames'
    /// delays, as the file gives them) and how many times it plays (0: for ever). Nil for a
    /// still image or a file that gives no delays.
    var timing: (durationMs: Int, loop: Int)? {
        var count: Int32 = 0
        let total = ph_vips_field_ints_sum(handle.pointer, "delay", &count)
        guard frames > 1, count > 0 else { return nil }
        return (Int(total), max(0, Int(ph_vips_field_int(handle.pointer, "loop", 0))))
    }
    var hasAlpha: Bool { ph_vips_has_alpha(handle.pointer) != 0 }

    /// Make, model and date taken, when the file has them.
    var exif: [String: String] {
        var found: [String: String] = [:]
        found["make"] = exifText("exif-ifd0-Make")
        found["model"] = exifText("exif-ifd0-Model")
        found["date_taken"] = exifText("exif-ifd2-DateTimeOriginal") ?? exifText("exif-ifd0-DateTime")
        return found
    }

    /// Latitude and longitude in degrees (south and west negative), when the file has both.
    var gps: (latitude: Double, longitude: Double)? {
        guard let latitude = degrees("exif-ifd3-GPSLatitude"), let longitude = degrees("exif-ifd3-GPSLongitude") else {
            return nil
        }
        let south = exifText("exif-ifd3-GPSLatitudeRef")?.uppercased() == "S"
        let west = exifText("exif-ifd3-GPSLongitudeRef")?.uppercased() == "W"
        return (south ? -latitude : latitude, west ? -longitude : longitude)
    }

    func string(_ name: String) -> String? {
        guard let text = ph_vips_field_string(handle.pointer, name) else { return nil }
        defer { ph_vips_free(text) }
        return String(cString: text)
    }

    /// An EXIF field's value: libvips writes "Canon (Canon, ASCII, 6 components, 6 bytes)", the
    /// value and then, in parentheses, its readable form and type.
    func exifText(_ name: String) -> String? {
        guard var text = string(name) else { return nil }
        if text.hasSuffix(" bytes)"), let open = text.range(of: " (", options: .backwards) {
            text = String(text[..<open.lowerBound])
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// "51/1 30/1 1234/100": degrees, minutes and seconds as rationals.
    private func degrees(_ name: String) -> Double? {
        guard let text = exifText(name) else { return nil }
        let parts = text.split(separator: " ").compactMap { part -> Double? in
            let pair = part.split(separator: "/")
            guard pair.count == 2, let top = Double(pair[0]), let bottom = Double(pair[1]), bottom != 0 else {
                return nil
            }
            return top / bottom
        }
        guard parts.count == 3 else { return nil }
        return parts[0] + parts[1] / 60 + parts[2] / 3600
    }
}
