/// The colour most of an image is: the pixels are counted into 16 × 16 × 16 bins (as sharp's
/// `stats().dominant` does), weighted by their alpha, and the fullest bin's mean is the answer.
/// A mean of the bin, not its centre, so a flat image gives its own colour back.
public enum DominantColour {
    /// "#rrggbb"; nil for an image with no opaque pixel at all.
    public static func hex(of image: RGBAImage) -> String? {
        guard let (r, g, b) = rgb(of: image) else { return nil }
        let digits = Array("0123456789abcdef")
        return "#" + String([r, g, b].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// The dominant colour as three bytes; nil when every pixel is transparent.
    public static func rgb(of image: RGBAImage) -> (UInt8, UInt8, UInt8)? {
        var weight = [Int](repeating: 0, count: 4096)
        var sums = [Int](repeating: 0, count: 4096 * 3)
        let pixels = image.pixels
        for offset in stride(from: 0, to: pixels.count, by: 4) {
            let alpha = Int(pixels[offset + 3])
            guard alpha > 0 else { continue }
            let (r, g, b) = (Int(pixels[offset]), Int(pixels[offset + 1]), Int(pixels[offset + 2]))
            let bin = (r >> 4) << 8 | (g >> 4) << 4 | b >> 4
            weight[bin] += alpha
            sums[bin * 3] += r * alpha
            sums[bin * 3 + 1] += g * alpha
            sums[bin * 3 + 2] += b * alpha
        }
        // The first of equal bins, so the answer does not depend on anything but the pixels.
        guard let best = weight.indices.max(by: { weight[$0] < weight[$1] || (weight[$0] == weight[$1] && $0 > $1) }),
            weight[best] > 0
        else { return nil }
        let mean = { (channel: Int) in UInt8((sums[best * 3 + channel] + weight[best] / 2) / weight[best]) }
        return (mean(0), mean(1), mean(2))
    }
}
