/// A small image as 8-bit RGBA, not premultiplied, row by row: what the placeholder encoders
/// read. A host makes it by shrinking the decoded source to at most 100×100 (libvips'
/// shrink-on-load does most of that for free), never from the full pixels.
public struct RGBAImage: Sendable, Equatable {
    /// Pixels across, at least 1.
    public let width: Int
    /// Pixels down, at least 1.
    public let height: Int
    /// `width * height * 4` bytes: R, G, B, A per pixel.
    public let pixels: [UInt8]

    /// Nil unless `pixels` holds exactly `width * height` RGBA pixels, both sides at least 1.
    public init?(width: Int, height: Int, pixels: [UInt8]) {
        guard width >= 1, height >= 1, pixels.count == width * height * 4 else { return nil }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Whether any pixel is less than opaque.
    public var hasAlpha: Bool {
        stride(from: 3, to: pixels.count, by: 4).contains { pixels[$0] < 255 }
    }
}
