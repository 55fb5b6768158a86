import PipelineHost

/// What decode knows about bytes that are not an image: the media type they were sniffed as.
/// It travels as a `PipelineError`'s details.
public struct DecodeFailure: ErrorDetails, Equatable {
    /// "text/html", "application/json", "empty", ...
    public var sniffedType: String

    /// Details of bytes that are not an image.
    public init(sniffedType: String) { self.sniffedType = sniffedType }

    /// The field `run --json` prints: sniffed_type.
    public var jsonFields: [String: ErrorField] { ["sniffed_type": .string(sniffedType)] }
}

extension PipelineError {
    /// For `.notAnImage`: the media type the bytes were sniffed as.
    public var sniffedType: String? { (details as? DecodeFailure)?.sniffedType }
}
