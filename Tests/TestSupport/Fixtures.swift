import CVips
import Foundation

/// Real images made by libvips at test time, and a way to look inside encoded results.
public enum Fixtures {
    /// The package root, found from this file's path.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The bundled sample photo (2400x1600 JPEG).
    /// The bytes of the file at `path`.
    public static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Replaces the file at `path` with `bytes`.
    public static func write(_ path: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    public static var sample: [UInt8] { [UInt8](FileManager.default.contents(atPath: path("examples/sample.jpg"))!) }

    /// What a generated image is written as; a progressive JPEG has libjpeg's standard scans.
    public enum Format: Sendable { case jpeg, progressiveJPEG, png }

    /// A `width` x `height` image in four quadrants: red top-left, green top-right, blue
    /// bottom-left, white bottom-right. `orientation` sets the EXIF orientation tag (1-8).
    public static func quadrants(width: Int, height: Int, format: Format = .jpeg, orientation: Int? = nil) -> [UInt8] {
        start()
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let colour: (UInt8, UInt8, UInt8) =
                    switch (x < width / 2, y < height / 2) {
                    case (true, true): (255, 0, 0)
                    case (false, true): (0, 255, 0)
                    case (true, false): (0, 0, 255)
                    case (false, false): (255, 255, 255)
                    }
                let i = (y * width + x) * 3
                (pixels[i], pixels[i + 1], pixels[i + 2]) = colour
            }
        }
        return encode(
            rgb: pixels, width: width, height: height, as: format == .png ? PH_FORMAT_PNG : PH_FORMAT_JPEG,
            progressive: format == .progressiveJPEG
        ) {
            if let orientation { vips_image_set_int($0, "orientation", Int32(orientation)) }
        }
    }

    /// A `width` x `height` image whose pixel at (x, y) is `colour(x, y)`; PNG keeps the
    /// colours exact, `alpha` adds a fourth band from the colour's alpha.
    public static func painted(
        width: Int, height: Int, format: Format = .png, alpha: Bool = false,
        _ colour: (Int, Int) -> [UInt8]
    ) -> [UInt8] {
        start()
        let bands = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * bands)
        for y in 0..<height {
            for x in 0..<width {
                let value = colour(x, y)
                for band in 0..<bands {
                    pixels[(y * width + x) * bands + band] = band < value.count ? value[band] : 255
                }
            }
        }
        return encode(
            rgb: pixels, width: width, height: height, bands: bands,
            as: format == .png ? PH_FORMAT_PNG : PH_FORMAT_JPEG, progressive: format == .progressiveJPEG
        ) { _ in }
    }

    /// `pixels` (RGB) encoded as `format`, with the EXIF orientation tag `orientation` if given.
    public static func encoded(_ pixels: Pixels, format: Format = .jpeg, orientation: Int? = nil) -> [UInt8] {
        start()
        precondition(pixels.bands == 3)
        return encode(
            rgb: pixels.samples, width: pixels.width, height: pixels.height,
            as: format == .png ? PH_FORMAT_PNG : PH_FORMAT_JPEG, progressive: format == .progressiveJPEG
        ) {
            if let orientation { vips_image_set_int($0, "orientation", Int32(orientation)) }
        }
    }

    /// Encoded `bytes` resized by libvips to fill `width` x `height` (cropped at the centre,
    /// enlarged if need be), as RGB pixels.
    public static func resized(_ bytes: [UInt8], width: Int, height: Int) -> Pixels? {
        start()
        var out: UnsafeMutablePointer<VipsImage>?
        let centre = ph_crop(mode: PH_CROP_CENTRE, x: 0.5, y: 0.5)
        guard
            bytes.withUnsafeBytes({
                ph_vips_thumbnail_buffer($0.baseAddress, $0.count, Int32(width), Int32(height), centre, 1, 1, &out)
            }) == 0, let out
        else { return nil }
        defer { ph_vips_unref(out) }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard ph_vips_rgba8(out, &buffer, &length) == 0, let buffer else { return nil }
        defer { ph_vips_free(buffer) }
        let rgba = UnsafeRawBufferPointer(start: buffer, count: length)
        let (w, h) = (Int(ph_vips_width(out)), Int(ph_vips_height(out)))
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        for pixel in 0..<w * h {
            for band in 0..<3 { rgb[pixel * 3 + band] = rgba[pixel * 4 + band] }
        }
        return Pixels(width: w, height: h, bands: 3, samples: rgb)
    }

    /// An image's decoded pixels: size, bands and 8-bit samples, row by row.
    public struct Pixels: Sendable {
        public let width: Int
        public let height: Int
        public let bands: Int
        public let samples: [UInt8]

        /// The samples of the pixel at (x, y).
        public subscript(x: Int, y: Int) -> [UInt8] {
            Array(samples[(y * width + x) * bands..<(y * width + x + 1) * bands])
        }

        /// The mean squared error over the colour samples (not alpha) against `other`, nil when
        /// the sizes differ.
        public func meanSquaredError(to other: Pixels) -> Double? {
            guard width == other.width && height == other.height else { return nil }
            var sum = 0.0
            for pixel in 0..<width * height {
                for band in 0..<3 {
                    let d =
                        Double(samples[pixel * bands + min(band, bands - 1)])
                        - Double(other.samples[pixel * other.bands + min(band, other.bands - 1)])
                    sum += d * d
                }
            }
            return sum / Double(3 * width * height)
        }
    }

    /// The pixels of encoded `bytes`, nil when they do not decode.
    public static func decoded(_ bytes: [UInt8]) -> Pixels? {
        pixels(bytes).map { Pixels(width: $0.width, height: $0.height, bands: $0.bands, samples: $0.samples) }
    }

    /// Every frame of an animation, stacked top to bottom in one image (a still: its pixels).
    public static func decodedFrames(_ bytes: [UInt8]) -> Pixels? {
        pixels(bytes, frames: info(bytes)?.pages ?? 1).map {
            Pixels(width: $0.width, height: $0.height, bands: $0.bands, samples: $0.samples)
        }
    }

    /// An animated GIF of `frames` frames, each `side` x `side` and a shade of grey.
    public static func animatedGIF(frames: Int, side: Int = 16) -> [UInt8] {
        animation(frames: frames, width: side, height: side, as: PH_FORMAT_GIF)
    }

    /// An animated GIF of `frames` frames of `width` x `height`, each a shade of grey.
    public static func animatedGIF(frames: Int, width: Int, height: Int) -> [UInt8] {
        animation(frames: frames, width: width, height: height, as: PH_FORMAT_GIF)
    }

    /// An animated GIF whose every frame shows for `delayMs` and that plays `loop` times (0: for
    /// ever).
    public static func animatedGIF(frames: Int, side: Int = 16, delayMs: Int, loop: Int) -> [UInt8] {
        animation(frames: frames, width: side, height: side, as: PH_FORMAT_GIF) { image in
            var delays = [Int32](repeating: Int32(delayMs), count: frames)
            vips_image_set_array_int(image, "delay", &delays, Int32(frames))
            vips_image_set_int(image, "loop", Int32(loop))
        }
    }

    /// The same as an animated WebP.
    public static func animatedWebP(frames: Int, side: Int = 16) -> [UInt8] {
        animation(frames: frames, width: side, height: side, as: PH_FORMAT_WEBP)
    }

    /// An animated GIF of `frames` frames of `width` x `height` whose pixel (x, y) in frame `f`
    /// is `colour(f, x, y)`: RGB, or RGBA where `colour` gives four samples.
    public static func animatedGIF(
        frames: Int, width: Int, height: Int, _ colour: (Int, Int, Int) -> [UInt8]
    ) -> [UInt8] {
        drawnAnimation(frames: frames, width: width, height: height, as: PH_FORMAT_GIF, colour)
    }

    /// The same as an animated WebP (lossy: thousands of colours where a GIF holds 256).
    public static func animatedWebP(
        frames: Int, width: Int, height: Int, _ colour: (Int, Int, Int) -> [UInt8]
    ) -> [UInt8] {
        drawnAnimation(frames: frames, width: width, height: height, as: PH_FORMAT_WEBP, colour)
    }

    private static func drawnAnimation(
        frames: Int, width: Int, height: Int, as format: ph_format, _ colour: (Int, Int, Int) -> [UInt8]
    ) -> [UInt8] {
        start()
        let bands = colour(0, 0, 0).count == 4 ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: frames * width * height * bands)
        for frame in 0..<frames {
            for y in 0..<height {
                for x in 0..<width {
                    let at = ((frame * height + y) * width + x) * bands
                    pixels.replaceSubrange(at..<at + bands, with: colour(frame, x, y).prefix(bands))
                }
            }
        }
        return encode(rgb: pixels, width: width, height: height * frames, bands: bands, as: format) {
            vips_image_set_int($0, "page-height", Int32(height))
        }
    }

    /// An animation panning across the sample photo: frame f is the `width` x `height` window
    /// `step` pixels further right than frame f - 1, as GIF (or WebP). A real picture, so a frame
    /// put in another's place, or colour that crosses from one to the next, shows. `shrink` pans
    /// across the photo shrunk that many times (each pixel the mean of a square), a wider view.
    public static func photoPan(frames: Int, width: Int, height: Int, step: Int, webp: Bool = false, shrink: Int = 1)
        -> [UInt8]
    {
        start()
        let photo = shrunk(decoded(sample)!, by: shrink)
        precondition(photo.bands == 3 && (frames - 1) * step + width <= photo.width && height <= photo.height)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(frames * width * height * 3)
        for frame in 0..<frames {
            for y in 0..<height {
                let start = (y * photo.width + frame * step) * 3
                pixels += photo.samples[start..<start + width * 3]
            }
        }
        return encode(rgb: pixels, width: width, height: height * frames, as: webp ? PH_FORMAT_WEBP : PH_FORMAT_GIF) {
            vips_image_set_int($0, "page-height", Int32(height))
        }
    }

    /// `pixels` with each `factor` x `factor` square averaged into one pixel.
    public static func shrunk(_ pixels: Pixels, by factor: Int) -> Pixels {
        guard factor > 1 else { return pixels }
        let (width, height, bands) = (pixels.width / factor, pixels.height / factor, pixels.bands)
        var out = [UInt8](repeating: 0, count: width * height * bands)
        pixels.samples.withUnsafeBufferPointer { source in
            for y in 0..<height {
                for x in 0..<width {
                    for band in 0..<bands {
                        var sum = 0
                        for dy in 0..<factor {
                            let row = ((y * factor + dy) * pixels.width + x * factor) * bands + band
                            for dx in 0..<factor { sum += Int(source[row + dx * bands]) }
                        }
                        out[(y * width + x) * bands + band] = UInt8((sum + factor * factor / 2) / (factor * factor))
                    }
                }
            }
        }
        return Pixels(width: width, height: height, bands: bands, samples: out)
    }

    /// Every frame of an animated AVIF as decode reads it (through libavif: libvips' libheif
    /// reads no sequence), stacked top to bottom, with each frame's duration in milliseconds.
    public static func avifFrames(_ bytes: [UInt8]) -> (frames: Pixels, delays: [Int])? {
        start()
        return bytes.withUnsafeBytes { raw -> (frames: Pixels, delays: [Int])? in
            guard ph_avif_is_sequence(raw.baseAddress, raw.count) != 0,
                let image = ph_vips_open(raw.baseAddress, raw.count, 100_000)
            else { return nil }
            defer { ph_vips_unref(image) }
            var length = 0
            guard let memory = vips_image_write_to_memory(image, &length) else { return nil }
            defer { ph_vips_free(memory) }
            var delays: UnsafeMutablePointer<Int32>?
            var count: Int32 = 0
            vips_image_get_array_int(image, "delay", &delays, &count)
            let pixels = Pixels(
                width: Int(ph_vips_width(image)), height: Int(ph_vips_height(image)), bands: Int(ph_vips_bands(image)),
                samples: [UInt8](UnsafeRawBufferPointer(start: memory, count: length)))
            return (pixels, (0..<Int(count)).map { Int(delays![$0]) })
        }
    }

    /// `bytes` (every frame) written again as a GIF with `threads` frames quantized side by side,
    /// or by libvips' own saver for 0, at libvips' effort 1 (encode's default).
    public static func rewrittenGIF(_ bytes: [UInt8], threads: Int) -> [UInt8]? {
        start()
        return bytes.withUnsafeBytes { raw -> [UInt8]? in
            guard let image = ph_vips_open(raw.baseAddress, raw.count, Int32(info(bytes)?.pages ?? 1)) else {
                return nil
            }
            defer { ph_vips_unref(image) }
            return writtenGIF(image, threads: threads, palettes: [])
        }
    }

    /// Tightly packed 8-bit sRGB frames of `width` x `frameHeight`, stacked, written as a GIF by
    /// pipelinehost's writer on two threads, with `palettes` as their source's, frame by frame.
    public static func writtenGIF(rgb: [UInt8], width: Int, frameHeight: Int, palettes: [ph_gif_palette]) -> [UInt8]? {
        start()
        let image = rgb.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(rgb.count / 3 / width), 3, VIPS_FORMAT_UCHAR)!
        }
        defer { ph_vips_unref(image) }
        image.pointee.Type = VIPS_INTERPRETATION_sRGB
        vips_image_set_int(image, "page-height", Int32(frameHeight))
        return writtenGIF(image, threads: 2, palettes: palettes)
    }

    private static func writtenGIF(_ image: UnsafeMutablePointer<VipsImage>, threads: Int, palettes: [ph_gif_palette])
        -> [UInt8]?
    {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let saved = palettes.withUnsafeBufferPointer { table in
            ph_gif_save_buffer(
                image, 1, 1, Int32(threads), table.isEmpty ? nil : table.baseAddress, Int32(table.count), &buffer,
                &length)
        }
        guard saved == 0, let buffer else { return nil }
        defer { ph_vips_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// A GIF whose screen is `side` x `side` and whose `frames` frames each paint one pixel,
    /// written by hand: a few bytes a frame, while its header describes frames x side² pixels.
    public static func sparseGIF(frames: Int, side: Int) -> [UInt8] {
        let size: [UInt8] = [UInt8(side & 0xFF), UInt8(side >> 8)]
        var out = Array("GIF89a".utf8) + size + size + [0x80, 0, 0, 0, 0, 0, 255, 255, 255]
        out += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]
        for _ in 0..<frames {
            out += [0x21, 0xF9, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00]  // 40 ms
            out += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00]  // one pixel
        }
        return out + [0x3B]
    }

    /// The shade of grey of frame `index` in the animations above.
    public static func animationShade(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index * 37) }

    private static func animation(
        frames: Int, width: Int, height: Int, as format: ph_format,
        timing: (UnsafeMutablePointer<VipsImage>) -> Void = { _ in }
    ) -> [UInt8] {
        start()
        let frameSamples = width * height * 3
        let pixels = (0..<frames * frameSamples).map { animationShade($0 / frameSamples) }
        return encode(rgb: pixels, width: width, height: height * frames, as: format) {
            vips_image_set_int($0, "page-height", Int32(height))
            timing($0)
        }
    }

    /// A little-endian TIFF of `pages` one-pixel grey pages, written by hand (about 115 bytes a
    /// page): 50,000 pages take 6 MB, and libvips' TIFF loader reads every page's directory.
    public static func multiPageTIFF(pages: Int) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xFFFF) + u16(v >> 16 & 0xFFFF) }
        let entries = 9, directorySize = 2 + entries * 12 + 4
        let pixelAt = 8 + pages * directorySize
        var bytes: [UInt8] = Array("II".utf8) + u16(42) + u32(8)
        bytes.reserveCapacity(pixelAt + 1)
        for page in 0..<pages {
            let next = page < pages - 1 ? 8 + (page + 1) * directorySize : 0
            // width, height, bits per sample, no compression, black is zero, strip offset,
            // samples per pixel, rows per strip, strip byte count
            let tags: [(tag: Int, type: Int, value: Int)] = [
                (256, 3, 1), (257, 3, 1), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, pixelAt), (277, 3, 1),
                (278, 3, 1), (279, 4, 1),
            ]
            bytes += u16(entries)
            for tag in tags { bytes += u16(tag.tag) + u16(tag.type) + u32(1) + u32(tag.value) }
            bytes += u32(next)
        }
        return bytes + [0x80]
    }

    /// A minimal PDF with a binary comment line, as PDF writers make them, so it is not sniffed
    /// as text and reaches libvips' loader lookup.
    public static let binaryPDF: [UInt8] =
        Array("%PDF-1.4\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
        + Array("1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)

    /// A PNG of a few dozen bytes whose header declares `width` x `height`: what a decompression
    /// bomb looks like to a decoder that trusts headers.
    public static func bombPNG(width: UInt32, height: UInt32) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]  // 8-bit RGB
        let pixels: [UInt8] = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]  // a deflate stream
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header)
            + chunk("IDAT", pixels) + chunk("IEND", [])
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// What an encoded image is: its loader's format, size, bands and metadata.
    public struct Info: Sendable {
        public let format: String
        public let width: Int
        public let height: Int
        public let bands: Int
        public let hasEXIF: Bool
        /// Whether an ICC colour profile is embedded.
        public let hasICC: Bool
        /// Frames (pages) in the file.
        public let pages: Int
    }

    public static func info(_ bytes: [UInt8]) -> Info? {
        start()
        return bytes.withUnsafeBytes { raw -> Info? in
            guard let loader = ph_vips_find_loader(raw.baseAddress, raw.count),
                let image = ph_vips_open(raw.baseAddress, raw.count, 1)
            else { return nil }
            defer { ph_vips_unref(image) }
            let name = String(cString: loader)
            // GType nicknames: "VipsForeignLoadJpegBuffer" -> "jpeg".
            let nickname = name.replacingOccurrences(of: "VipsForeignLoad", with: "").replacingOccurrences(
                of: "Buffer", with: ""
            ).lowercased()
            let format = nickname == "nsgif" ? "gif" : nickname  // libvips' GIF loader is libnsgif
            return Info(
                format: format,
                width: Int(ph_vips_width(image)), height: Int(ph_vips_height(image)),
                bands: Int(ph_vips_bands(image)),
                hasEXIF: vips_image_get_typeof(image, "exif-data") != 0,
                hasICC: vips_image_get_typeof(image, "icc-profile-data") != 0,
                pages: Int(ph_vips_page_count(image)))
        }
    }

    /// An animation's timing as the file states it: each frame's delay in milliseconds and the
    /// plays (0: for ever); nil for a file without them.
    public static func timing(_ bytes: [UInt8]) -> (delays: [Int], loop: Int)? {
        start()
        return bytes.withUnsafeBytes { raw -> (delays: [Int], loop: Int)? in
            guard let image = ph_vips_open(raw.baseAddress, raw.count, 1) else { return nil }
            defer { ph_vips_unref(image) }
            var delays: UnsafeMutablePointer<Int32>?
            var count: Int32 = 0
            var loop: Int32 = 0
            guard vips_image_get_array_int(image, "delay", &delays, &count) == 0, let delays,
                vips_image_get_int(image, "loop", &loop) == 0
            else { return nil }
            return ((0..<Int(count)).map { Int(delays[$0]) }, Int(loop))
        }
    }

    /// Pixel statistics of an encoded image: mean brightness and mean absolute difference
    /// between horizontal neighbours (a measure of sharpness).
    public struct Stats: Sendable {
        public let mean: Double
        public let sharpness: Double
        /// The bands of the pixel at (x, y), given as fractions of the width and height.
        public let colourAt: @Sendable (Double, Double) -> [UInt8]
    }

    public static func stats(_ bytes: [UInt8]) -> Stats? {
        start()
        guard let (width, height, bands, pixels) = pixels(bytes) else { return nil }
        let mean = Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
        var differences = 0
        for y in 0..<height {
            for x in 1..<width {
                for b in 0..<bands {
                    let i = (y * width + x) * bands + b
                    differences += abs(Int(pixels[i]) - Int(pixels[i - bands]))
                }
            }
        }
        let sharpness = Double(differences) / Double(max(1, height * (width - 1) * bands))
        return Stats(mean: mean, sharpness: sharpness) { fx, fy in
            let x = min(width - 1, Int(fx * Double(width))), y = min(height - 1, Int(fy * Double(height)))
            let i = (y * width + x) * bands
            return Array(pixels[i..<i + bands])
        }
    }

    /// `bytes` blurred at full resolution with libvips' exact (integer-mask) Gaussian, as PNG:
    /// the reference the blur stage's look is measured against.
    public static func exactBlur(_ bytes: [UInt8], sigma: Double) -> [UInt8]? {
        start()
        return bytes.withUnsafeBytes { raw -> [UInt8]? in
            guard let image = ph_vips_open(raw.baseAddress, raw.count, 1) else { return nil }
            defer { ph_vips_unref(image) }
            var blurred: UnsafeMutablePointer<VipsImage>?
            guard ph_vips_gaussblur(image, sigma, 0, &blurred) == 0, let blurred else { return nil }
            defer { ph_vips_unref(blurred) }
            return save(blurred, PH_FORMAT_PNG, progressive: false)
        }
    }

    /// The mean absolute difference per band between two images, and the largest difference of
    /// any sample, in 8-bit units, over the area both cover (sizes may differ by a pixel of
    /// rounding, at most).
    public static func difference(_ a: [UInt8], _ b: [UInt8]) -> (meanPerBand: [Double], max: Int)? {
        guard let first = pixels(a), let second = pixels(b), first.bands == second.bands,
            abs(first.width - second.width) <= 1, abs(first.height - second.height) <= 1
        else { return nil }
        let (width, height, bands) = (min(first.width, second.width), min(first.height, second.height), first.bands)
        var sums = [Int](repeating: 0, count: bands), largest = 0
        for y in 0..<height {
            for x in 0..<width {
                for band in 0..<bands {
                    let difference = abs(
                        Int(first.samples[(y * first.width + x) * bands + band])
                            - Int(second.samples[(y * second.width + x) * bands + band]))
                    sums[band] += difference
                    largest = max(largest, difference)
                }
            }
        }
        return (sums.map { Double($0) / Double(width * height) }, largest)
    }

    private static func pixels(_ bytes: [UInt8], frames: Int = 1) -> (
        width: Int, height: Int, bands: Int, samples: [UInt8]
    )? {
        start()
        return bytes.withUnsafeBytes { raw in
            guard let image = ph_vips_open(raw.baseAddress, raw.count, Int32(frames)) else { return nil }
            defer { ph_vips_unref(image) }
            var length = 0
            guard let memory = vips_image_write_to_memory(image, &length) else { return nil }
            defer { ph_vips_free(memory) }
            return (
                Int(ph_vips_width(image)), Int(ph_vips_height(image)), Int(ph_vips_bands(image)),
                [UInt8](UnsafeRawBufferPointer(start: memory, count: length))
            )
        }
    }

    /// Encodes tightly packed 8-bit sRGB pixels; `tag` sets metadata on the image first.
    private static func encode(
        rgb pixels: [UInt8], width: Int, height: Int, bands: Int = 3, as format: ph_format, progressive: Bool = false,
        tag: (UnsafeMutablePointer<VipsImage>) -> Void
    ) -> [UInt8] {
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)!
        }
        defer { ph_vips_unref(image) }
        image.pointee.Type = VIPS_INTERPRETATION_sRGB
        tag(image)
        return save(image, format, progressive: progressive)
    }

    private static func save(_ image: UnsafeMutablePointer<VipsImage>, _ format: ph_format, progressive: Bool)
        -> [UInt8]
    {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        var failure = PH_SAVE_OK
        var options = ph_save_options(
            quality: 90, strip: 0, keep_icc: 0, effort: 4, lossless: 0, progressive: progressive ? 1 : 0,
            subsample: PH_SUBSAMPLE_AUTO,
            optimize_coding: 0)
        guard ph_vips_save(image, format, &options, nil, 0, &buffer, &length, &failure) == 0, let buffer else {
            fatalError("fixture encode failed")
        }
        defer { ph_vips_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private static let started: Bool = ph_vips_init("pipelinehost-tests", 0) == 0
    private static func start() { precondition(started, "libvips did not start") }
}
