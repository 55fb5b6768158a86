/// Encoded bytes plus what is known about them: where they came from, the sniffed or chosen
/// format, and the pixel size when a stage knows it.
public struct EncodedImage: Sendable {
    /// The encoded bytes.
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
    /// What the origin said about caching these bytes; nil for sources without such headers.
    public var cacheHints: CacheHints?
    /// The answer to a conditional fetch (`Source.validators`): the stored copy is still good,
    /// and `bytes` is empty. Only a fetch that was given validators may set it.
    public var notModified: Bool

    /// Bytes with what is known about them.
    public init(
        bytes: ImageBytes, format: String? = nil, declaredContentType: String? = nil,
        size: PixelSize? = nil, sourceSize: PixelSize? = nil,
        cacheHints: CacheHints? = nil, notModified: Bool = false
    ) {
        self.bytes = bytes
        self.format = format
        self.declaredContentType = declaredContentType
        self.size = size
        self.sourceSize = sourceSize
        self.cacheHints = cacheHints
        self.notModified = notModified
    }
}

/// A width and a height in pixels.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int
    /// A size of `width` by `height`.
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }
}
