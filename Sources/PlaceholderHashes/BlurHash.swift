import Foundation

/// BlurHash (Wolt's format): the image as a few cosine components in linear RGB, in base 83.
/// `encode` follows the format's reference encoder, so its decoders read the hash back. BlurHash
/// has no alpha: a transparent pixel counts as its colour over white, the page colour a
/// placeholder usually sits on.
public enum BlurHash {
    /// The hash of `image` with `x` by `y` components (each 1...9; 4×3 is the usual choice).
    public static func encode(_ image: RGBAImage, x componentsX: Int = 4, y componentsY: Int = 3) -> String {
        precondition(
            (1...9).contains(componentsX) && (1...9).contains(componentsY), "BlurHash has 1 to 9 components a side")
        let (width, height) = (image.width, image.height)
        // Linear RGB once per pixel, flattened over white.
        var linear = [Double](repeating: 0, count: width * height * 3)
        for pixel in 0..<(width * height) {
            let alpha = Double(image.pixels[pixel * 4 + 3]) / 255
            for channel in 0..<3 {
                let value = Double(image.pixels[pixel * 4 + channel]) * alpha + 255 * (1 - alpha)
                linear[pixel * 3 + channel] = toLinear(value)
            }
        }
        var factors: [(Double, Double, Double)] = []
        for j in 0..<componentsY {
            let rows = (0..<height).map { cos(Double.pi * Double(j) * Double($0) / Double(height)) }
            for i in 0..<componentsX {
                let columns = (0..<width).map { cos(Double.pi * Double(i) * Double($0) / Double(width)) }
                var sum = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    for x in 0..<width {
                        let basis = columns[x] * rows[y], at = (y * width + x) * 3
                        sum.0 += basis * linear[at]
                        sum.1 += basis * linear[at + 1]
                        sum.2 += basis * linear[at + 2]
                    }
                }
                let scale = (i == 0 && j == 0 ? 1.0 : 2.0) / Double(width * height)
                factors.append((sum.0 * scale, sum.1 * scale, sum.2 * scale))
            }
        }
        let dc = factors[0], ac = factors.dropFirst()
        var hash = base83(componentsX - 1 + (componentsY - 1) * 9, digits: 1)
        var maximum = 1.0
        if ac.isEmpty {
            hash += base83(0, digits: 1)
        } else {
            let largest = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max()!
            let quantised = max(0, min(82, Int((largest * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, digits: 1)
        }
        hash += base83(toSRGB(dc.0) << 16 | toSRGB(dc.1) << 8 | toSRGB(dc.2), digits: 4)
        for factor in ac {
            let quantise = { (value: Double) -> Int in
                let signed = copysign(pow(abs(value / maximum), 0.5), value)
                return max(0, min(18, Int((signed * 9 + 9.5).rounded(.down))))
            }
            hash += base83(quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), digits: 2)
        }
        return hash
    }

    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func base83(_ value: Int, digits: Int) -> String {
        var text = ""
        for place in (0..<digits).reversed() {
            var power = 1
            for _ in 0..<place { power *= 83 }
            text.append(alphabet[(value / power) % 83])
        }
        return text
    }

    /// An sRGB byte as linear light, 0...1.
    static func toLinear(_ value: Double) -> Double {
        let v = value / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Linear light as an sRGB byte.
    static func toSRGB(_ value: Double) -> Int {
        let v = min(1, max(0, value))
        let encoded = v <= 0.003_130_8 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055
        return Int(encoded * 255 + 0.5)
    }
}
