import Foundation

/// ThumbHash (Evan Wallace's format): luminance, two colour channels and alpha as a few cosine
/// components, with the aspect ratio and the average colour, in about 25 bytes. `encode` follows
/// the format's reference encoder, so its decoders read the hash back.
public enum ThumbHash {
    /// The hash of `image`, which must be at most 100×100 (the format's limit; shrink first).
    public static func encode(_ image: RGBAImage) -> [UInt8] {
        let (w, h) = (image.width, image.height)
        precondition(w <= 100 && h <= 100, "ThumbHash encodes images of at most 100×100")
        let count = w * h
        // The average colour, weighted by alpha.
        var average = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
        for pixel in 0..<count {
            let alpha = Double(image.pixels[pixel * 4 + 3]) / 255
            average.r += alpha / 255 * Double(image.pixels[pixel * 4])
            average.g += alpha / 255 * Double(image.pixels[pixel * 4 + 1])
            average.b += alpha / 255 * Double(image.pixels[pixel * 4 + 2])
            average.a += alpha
        }
        if average.a > 0 {
            average.r /= average.a
            average.g /= average.a
            average.b /= average.a
        }
        let hasAlpha = average.a < Double(count)
        let limit = Double(hasAlpha ? 5 : 7)
        let longer = Double(max(w, h))
        let lx = max(1, Int((limit * Double(w) / longer).rounded()))
        let ly = max(1, Int((limit * Double(h) / longer).rounded()))
        // Luminance and two colour channels of each pixel, composited over the average colour.
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for pixel in 0..<count {
            let alpha = Double(image.pixels[pixel * 4 + 3]) / 255
            let r = average.r * (1 - alpha) + alpha / 255 * Double(image.pixels[pixel * 4])
            let g = average.g * (1 - alpha) + alpha / 255 * Double(image.pixels[pixel * 4 + 1])
            let b = average.b * (1 - alpha) + alpha / 255 * Double(image.pixels[pixel * 4 + 2])
            l[pixel] = (r + g + b) / 3
            p[pixel] = (r + g) / 2 - b
            q[pixel] = r - g
            a[pixel] = alpha
        }
        let luminance = Channel(l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let blueYellow = Channel(p, width: w, height: h, nx: 3, ny: 3)
        let redGreen = Channel(q, width: w, height: h, nx: 3, ny: 3)
        let opacity = hasAlpha ? Channel(a, width: w, height: h, nx: 5, ny: 5) : nil
        let isLandscape = w > h
        let header24 =
            Self.round(63 * luminance.dc) | Self.round(31.5 + 31.5 * blueYellow.dc) << 6
            | Self.round(31.5 + 31.5 * redGreen.dc) << 12 | Self.round(31 * luminance.scale) << 18
            | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | Self.round(63 * blueYellow.scale) << 3
            | Self.round(63 * redGreen.scale) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16),
            UInt8(header16 & 255), UInt8(header16 >> 8),
        ]
        if let opacity { hash.append(UInt8(Self.round(15 * opacity.dc) | Self.round(15 * opacity.scale) << 4)) }
        // The AC factors, two to a byte, low nibble first.
        var nibble = 0
        for channel in [luminance, blueYellow, redGreen] + (opacity.map { [$0] } ?? []) {
            for factor in channel.ac {
                if nibble % 2 == 0 { hash.append(0) }
                hash[hash.count - 1] |= UInt8(Self.round(15 * factor) << (nibble % 2 * 4))
                nibble += 1
            }
        }
        return hash
    }

    /// Rounds as the reference's JavaScript `Math.round` does (halves up); every value here is
    /// at least 0.
    static func round(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }

    /// One channel as cosine components: the DC term, the AC terms scaled to 0...1, and the scale.
    struct Channel {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0

        init(_ values: [Double], width w: Int, height h: Int, nx: Int, ny: Int) {
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    var f = 0.0
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += values[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        }
    }
}
