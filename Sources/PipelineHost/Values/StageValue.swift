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
