/// The kinds of value that flow between stages. The profile loader type-checks a chain with
/// them, so `blur` after `fetch` is caught before anything runs.
public enum ValueKind: String, Sendable, CustomStringConvertible {
    case source, encoded, image
    public var description: String {
        switch self {
        case .source: "a source"
        case .encoded: "encoded bytes"
        case .image: "an image"
        }
    }
}

/// A decoded (or lazily decodable) image. The imaging plugin supplies the concrete type; the host
/// only needs its size.
public protocol PipelineImage: Sendable {
    var size: PixelSize { get }
    /// The size of the source this image came from, before any resizing.
    var sourceSize: PixelSize { get }
    /// The most memory making this image's pixels may take, predicted from its header (a
    /// progressive JPEG's coefficient buffer, an interlaced PNG's whole image), in bytes. The
    /// stage that opens an image says it; the pipeline draws it from the memory budget before any
    /// later stage computes a pixel, and gives it back when the image is gone. 0 (the default):
    /// nothing to draw. (Plugin API 1.6.)
    var predictedPeakBytes: Int { get }
}

extension PipelineImage {
    /// Images that say nothing draw nothing from the memory budget.
    public var predictedPeakBytes: Int { 0 }
}

/// What one stage hands to the next.
public enum StageValue: Sendable {
    case source(Source)
    case encoded(EncodedImage)
    case image(any PipelineImage)

    /// The kind of value this is.
    public var kind: ValueKind {
        switch self {
        case .source: .source
        case .encoded: .encoded
        case .image: .image
        }
    }
}
