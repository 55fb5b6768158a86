extension Sequence<UInt8> {
    /// The bytes as lower-case hex, two digits each: digests in cache file names, Redis keys,
    /// ETags and output names, and a plugin's own (Subsonic's tokens). The one hex encoder.
    public var hexDigits: String {
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(hexDigit(byte >> 4))
            text.append(hexDigit(byte & 0xF))
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The ASCII digit for a value 0...15.
private func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10 }
