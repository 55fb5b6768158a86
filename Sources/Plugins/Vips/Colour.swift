import PipelineHost

/// A colour written in a profile as "#rrggbb", or "#rrggbbaa" with an alpha, channels 0–255.
public struct Colour: Sendable, Equatable {
    /// The red channel, 0–255.
    public let red: Double
    /// The green channel, 0–255.
    public let green: Double
    /// The blue channel, 0–255.
    public let blue: Double
    /// The alpha, 0 (transparent) to 255 (opaque; what "#rrggbb" gives).
    public let alpha: Double

    /// Parses "#rrggbb" or "#rrggbbaa"; nil for anything else.
    public init?(hex text: String) {
        guard text.first == "#", text.count == 7 || text.count == 9,
            let value = UInt64(text.dropFirst(), radix: 16)
        else { return nil }
        let withAlpha = text.count == 9 ? value : value << 8 | 0xFF
        red = Double(withAlpha >> 24 & 0xFF)
        green = Double(withAlpha >> 16 & 0xFF)
        blue = Double(withAlpha >> 8 & 0xFF)
        alpha = Double(withAlpha & 0xFF)
    }

    /// The colour of a parameter, or a ParameterError that says how to write one.
    public static func parameter(_ name: String, of stage: String, _ text: String) throws(ParameterError) -> Colour {
        guard let colour = Colour(hex: text) else {
            throw ParameterError(
                "\(stage): '\(name)' must be a colour like \"#ffffff\" or \"#ffffff80\", got \"\(text.prefix(40))\"")
        }
        return colour
    }

    /// The channels as libvips takes them.
    var rgba: [Double] { [red, green, blue, alpha] }
}
