/// Encoded bytes plus what is known about them: where they came from, the sniffed or chosen
/// format, and the pixel size when a stage knows it.
public struct EncodedImage: Sendable {
    public var bytes: ImageBytes
    /// "jpeg", "png", "webp", "avif", ... or nil when not known yet.
    public var format: String?
    /// The Content-Type a server sent. Informational only: decoders sniff the bytes.
    public var declaredContentType: String?
    /// The pixel size, when the stage that made the bytes knows it.
    public var size: PixelSize?
    /// The image this was made from: the source as it came in. Kept so later stages can still
    /// reach it (metrics compare source and output size).
    public var sourceSize: PixelSize?

    public init(bytes: ImageBytes, format: String? = nil, declaredContentType: String? = nil,
                size: PixelSize? = nil, sourceSize: PixelSize? = nil) {
        self.bytes = bytes
        self.format = format
        self.declaredContentType = declaredContentType
        self.size = size
        self.sourceSize = sourceSize
    }
}

public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }
}
