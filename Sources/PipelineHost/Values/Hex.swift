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
private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
}

extension UInt8 {
    /// The value of this ASCII hex digit (either case), or nil: the one hex decoder's digit.
    public var hexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension [UInt8] {
    /// The bytes of `hex`, two digits (either case) each; nil for an odd length or any other
    /// character: the one hex decoder (signatures, sealed purge messages).
    public init?(hex: Substring) {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = digits[index].hexValue, let low = digits[index + 1].hexValue else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }
}

extension Substring {
    /// Strict percent-decoding: nil for a stray "%" or bytes that are not UTF-8. Serve's plain
    /// sources and the user information of a Redis URL read it.
    public var percentDecoded: String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next()?.hexValue, let low = iterator.next()?.hexValue else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
