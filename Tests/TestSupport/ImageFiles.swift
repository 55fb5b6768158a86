import Foundation

/// Image files in formats the test process does not write itself, made with the `vips` command
/// (libvips-tools, which scripts/setup test installs), and three written by hand (BMP, ICO, PSD),
/// whose only loader in this libvips is ImageMagick's.
public enum ImageFiles {
    /// `input` (a file) converted by `vips` to `name` in `directory`, such as "x.heic" or
    /// "x.heif[compression=av1]"; nil when this libvips cannot write it.
    public static func converted(
        _ input: String, to name: String, in directory: TemporaryDirectory,
        operation: [String] = ["copy"]
    ) async throws -> [UInt8]? {
        let target = directory.file(name)
        let file = String(target.prefix { $0 != "[" })
        _ = try await onOwnThread {
            try output(of: "/usr/bin/vips", operation.prefix(1) + [input, target] + operation.dropFirst())
        }
        return FileManager.default.fileExists(atPath: file) ? try Fixtures.read(file) : nil
    }

    /// A 24-bit BMP of `width` x `height` in one colour.
    public static func bmp(width: Int, height: Int, rgb: [UInt8]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xFFFF) + u16(v >> 16 & 0xFFFF) }
        let row = (0..<width).flatMap { _ in [rgb[2], rgb[1], rgb[0]] }
        let padded = row + [UInt8](repeating: 0, count: (4 - row.count % 4) % 4)
        let pixels = (0..<height).flatMap { _ in padded }
        let header = Array("BM".utf8) + u32(54 + pixels.count) + u32(0) + u32(54)
        let info =
            u32(40) + u32(width) + u32(height) + u16(1) + u16(24) + u32(0) + u32(pixels.count) + u32(2835) + u32(2835)
            + u32(0) + u32(0)
        return header + info + pixels
    }

    /// A Photoshop file (one layer, 8-bit RGB, uncompressed) in one colour: a format this libvips
    /// reads only through ImageMagick, which Sniffer does not name.
    public static func psd(width: Int, height: Int, rgb: [UInt8]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16 & 0xFFFF) + u16(v & 0xFFFF) }
        let header =
            Array("8BPS".utf8) + u16(1) + [UInt8](repeating: 0, count: 6) + u16(3) + u32(height)
            + u32(width) + u16(8) + u16(3)
        // Empty colour mode, resource and layer sections; raw planes, one per channel.
        let planes = rgb.flatMap { [UInt8](repeating: $0, count: width * height) }
        return header + u32(0) + u32(0) + u32(0) + u16(0) + planes
    }

    /// An ICO holding one PNG image.
    public static func ico(png: [UInt8], side: Int) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xFFFF) + u16(v >> 16 & 0xFFFF) }
        let entry = [UInt8(side % 256), UInt8(side % 256), 0, 0] + u16(1) + u16(32) + u32(png.count) + u32(22)
        return u16(0) + u16(1) + u16(1) + entry + png
    }
}

extension Fixtures {
    /// The CIE76 colour difference between two 8-bit sRGB colours (ΔE ≤ 2.3 is about the
    /// smallest difference people see).
    public static func deltaE(_ a: [UInt8], _ b: [UInt8]) -> Double {
        let (l1, a1, b1) = lab(a), (l2, a2, b2) = lab(b)
        return ((l1 - l2) * (l1 - l2) + (a1 - a2) * (a1 - a2) + (b1 - b2) * (b1 - b2)).squareRoot()
    }

    private static func lab(_ rgb: [UInt8]) -> (Double, Double, Double) {
        func linear(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (r, g, b) = (linear(rgb[0]), linear(rgb[1]), linear(rgb[2]))
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }
}
