import Foundation
import PlaceholderHashes
import TestSupport
import Testing

/// BlurHash and ThumbHash against the formats' reference implementations: the same pixels give
/// the same hash, and the reference reads back our hash's average colour and aspect ratio. On
/// real photos and on the edge cases: alpha, 1×1, very wide, grey.
@Suite("placeholder hashes: read back by the reference decoders", .needs(.pixels, .process))
struct PlaceholderHashTests {
    /// Test images by name, made here or by libvips from a real photo.
    static func image(_ name: String) throws -> RGBAImage {
        func make(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> [UInt8]) -> RGBAImage {
            var pixels: [UInt8] = []
            for y in 0..<height { for x in 0..<width { pixels += pixel(x, y) } }
            return RGBAImage(width: width, height: height, pixels: pixels)!
        }
        switch name {
        case "gradient": return make(64, 48) { x, y in [UInt8(x * 4), UInt8(y * 5), 128, 255] }
        case "1x1": return make(1, 1) { _, _ in [200, 30, 60, 255] }
        case "wide": return make(100, 3) { x, _ in x < 50 ? [250, 250, 20, 255] : [10, 40, 200, 255] }
        case "grey": return make(32, 32) { x, y in [UInt8((x + y) * 4), UInt8((x + y) * 4), UInt8((x + y) * 4), 255] }
        case "alpha": return make(40, 40) { x, _ in [220, 40, 40, UInt8(x * 6)] }
        case "transparent": return make(8, 8) { _, _ in [0, 0, 0, 0] }
        default: return try Self.photo(name)
        }
    }

    /// A real photo shrunk to fit 100×100 by libvips, as RGBA.
    static func photo(_ relative: String) throws -> RGBAImage {
        let directory = try TemporaryDirectory()
        let small = directory.path + "/small.v", rgba = directory.path + "/rgba.v", raw = directory.path + "/rgba.raw"
        let srgb = directory.path + "/srgb.v"
        // An alpha band of 255 on what has none (a PNG with alpha keeps its own; the constant
        // band then lands as a fifth, which the check below refuses).
        let opaque = !relative.hasSuffix(".png")
        let steps = [
            ["vips", "thumbnail", Fixtures.path(relative), small, "100"], ["vips", "colourspace", small, srgb, "srgb"],
            opaque ? ["vips", "bandjoin_const", srgb, rgba, "255"] : ["vips", "copy", srgb, rgba],
            ["vips", "rawsave", rgba, raw],
        ]
        for arguments in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw ReferenceFailure("\(arguments.joined(separator: " ")) failed")
            }
        }
        let header = { (field: String) throws -> Int in
            let process = Process(), pipe = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["vipsheader", "-f", field, rgba]
            process.standardOutput = pipe
            try process.run()
            process.waitUntilExit()
            return Int(
                String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        let pixels = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        return try #require(RGBAImage(width: try header("width"), height: try header("height"), pixels: pixels))
    }

    /// The image's own average colour, weighted by alpha (what ThumbHash keeps), 0...1.
    static func average(_ image: RGBAImage) -> [Double] {
        var sums = [0.0, 0.0, 0.0], weight = 0.0
        for pixel in 0..<(image.width * image.height) {
            let alpha = Double(image.pixels[pixel * 4 + 3]) / 255
            for channel in 0..<3 { sums[channel] += alpha * Double(image.pixels[pixel * 4 + channel]) / 255 }
            weight += alpha
        }
        return weight > 0 ? sums.map { $0 / weight } : [0, 0, 0]
    }

    @Test(
        "each hash is the reference's own for the same pixels, and decodes to the image's colour and shape",
        arguments: [
            "gradient", "1x1", "wide", "grey", "alpha", "transparent", "examples/sample.jpg",
            "docs/gallery/cover-west.jpg", "docs/gallery/mark.png",
        ])
    func matchesTheReference(_ name: String) async throws {
        let image = try Self.image(name)
        let blur = BlurHash.encode(image)
        let thumb = ThumbHash.encode(image)
        let reference = try await ReferenceDecoders.check(image, blurhash: blur, thumbhash: thumb)
        #expect(blur == reference.blurhash)
        // ThumbHash keeps the average colour to 6 bits of luminance and colour, and alpha to 4.
        let average = Self.average(image)
        for channel in 0..<3 {
            #expect(abs(reference.thumbAverage[channel] - average[channel]) < 0.04, "\(name) channel \(channel)")
        }
        #expect(abs(reference.thumbAverage[3] - Self.meanAlpha(image)) < 0.07, "\(name) alpha")
        // Its aspect ratio is the image's, to the nearest of the format's steps: the longer side
        // is 7 steps (5 with alpha), the shorter one rounded, at least 1.
        let steps = Double(image.hasAlpha ? 5 : 7), (w, h) = (Double(image.width), Double(image.height))
        let expected = w > h ? steps / max(1, (steps * h / w).rounded()) : max(1, (steps * w / h).rounded()) / steps
        #expect(abs(reference.thumbAspect - expected) < 1e-9, "\(name): \(reference.thumbAspect) against \(w / h)")
        // BlurHash's average colour, as the reference reads it, is the image's mean over white.
        let mean = (0..<3).map { BlurHashTesting.meanSRGB(image, channel: $0) }
        for channel in 0..<3 {
            #expect(abs(reference.blurAverage[channel] - mean[channel]) <= 1, "\(name) channel \(channel)")
        }
    }

    static func meanAlpha(_ image: RGBAImage) -> Double {
        let count = image.width * image.height
        return (0..<count).reduce(0.0) { $0 + Double(image.pixels[$1 * 4 + 3]) / 255 } / Double(count)
    }
}

/// The mean of an image's channel over white, taken in linear light as BlurHash's DC term is, back in sRGB.
enum BlurHashTesting {
    static func meanSRGB(_ image: RGBAImage, channel: Int) -> Double {
        let count = image.width * image.height
        var sum = 0.0
        for pixel in 0..<count {
            let alpha = Double(image.pixels[pixel * 4 + 3]) / 255
            let v = (Double(image.pixels[pixel * 4 + channel]) * alpha + 255 * (1 - alpha)) / 255
            sum += v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        let linear = sum / Double(count)
        let encoded = linear <= 0.003_130_8 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
        return encoded * 255
    }
}
