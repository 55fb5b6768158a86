/// Why one request failed. A public struct around an open set of kinds, so new cases can be added
/// without breaking callers (the async-http-client pattern). What only one layer knows (an
/// HTTP status, a sniffed media type) travels in `details`, a payload that layer defines: the
/// core knows kinds, reasons and sources, and nothing of HTTP or image formats.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        public static let invalidSource = Kind("invalid_source")
        public static let httpStatus = Kind("http_status")
        public static let transport = Kind("transport")
        public static let timeout = Kind("timeout")
        public static let tooLarge = Kind("too_large")
        public static let notAnImage = Kind("not_an_image")
        public static let unsupportedFormat = Kind("unsupported_format")
        public static let pixelLimit = Kind("pixel_limit")
        public static let decodeFailed = Kind("decode_failed")
        public static let encodeFailed = Kind("encode_failed")
        /// Refused by policy: an address block_private forbids.
        public static let blocked = Kind("blocked")
        public static let cancelled = Kind("cancelled")
        /// Offline, and the cache holds nothing for the request.
        public static let notCached = Kind("not_cached")
        public static let profile = Kind("profile")
        public static let stageFailed = Kind("stage_failed")
    }

    public let kind: Kind
    /// The cause, written for a person: "HTTP 404", "not an image (text/html)".
    public var reason: String
    /// What the layer that failed knows besides kind and reason (fetch: the HTTP status, curl's
    /// code, Retry-After; decode: the sniffed type). That layer's module offers typed accessors.
    public var details: (any ErrorDetails)?
    /// The source, redacted. The pipeline fills it in.
    public var source: String?

    public init(_ kind: Kind, _ reason: String, details: (any ErrorDetails)? = nil, source: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.details = details
        self.source = source
    }

    /// One line: "<source>: <reason>".
    public var description: String { source.map { "\($0): \(reason)" } ?? reason }

    public static func cancelled(_ reason: String = "cancelled") -> PipelineError {
        PipelineError(.cancelled, reason)
    }
}

/// A failure's details as the layer that failed defines them. They render themselves as JSON
/// fields for `run --json` (and serve's error bodies), so a new plugin's details appear there
/// without the CLI knowing them.
public protocol ErrorDetails: Sendable {
    /// Snake-case names and values, such as `["http_status": .integer(404)]`. Absent values are
    /// left out.
    var jsonFields: [String: ErrorField] { get }
}

/// One value of an error's details.
public enum ErrorField: Sendable, Equatable {
    case integer(Int)
    case number(Double)
    case string(String)
}
