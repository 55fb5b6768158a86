/// Why one request failed. A public struct around an open set of kinds, so new cases can be added
/// without breaking callers (the async-http-client pattern). What only one layer knows (an
/// HTTP status, a sniffed media type) travels in `details`, a payload that layer defines: the
/// core knows kinds, reasons and sources, and nothing of HTTP or image formats.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// A kind of failure. An open set: a plugin can add kinds of its own, such as the CLI's `output_failed`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The name `--json` prints, such as "http_status".
        public let name: String
        /// A kind with this name.
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Empty, malformed or disallowed sources, and redirects to a scheme that is not allowed.
        public static let invalidSource = Kind("invalid_source")
        /// A non-2xx answer, after any retries.
        public static let httpStatus = Kind("http_status")
        /// A connection refused or dropped, or too many redirects.
        public static let transport = Kind("transport")
        /// The transfer passed `timeout`, `connect_timeout` or the low-speed limit.
        public static let timeout = Kind("timeout")
        /// The body or the headers passed their limit.
        public static let tooLarge = Kind("too_large")
        /// Bytes that are HTML, XML, JSON, SVG, text, or empty.
        public static let notAnImage = Kind("not_an_image")
        /// Bytes no accepted loader reads, or a blocked loader.
        public static let unsupportedFormat = Kind("unsupported_format")
        /// Over `max_pixels` or `max_frames`, from the header.
        public static let pixelLimit = Kind("pixel_limit")
        /// A damaged or truncated image.
        public static let decodeFailed = Kind("decode_failed")
        /// The image could not be encoded in the asked format.
        public static let encodeFailed = Kind("encode_failed")
        /// Refused by policy: an address block_private forbids.
        public static let blocked = Kind("blocked")
        /// Nobody waits for the request any more.
        public static let cancelled = Kind("cancelled")
        /// Offline, and the cache holds nothing for the request.
        public static let notCached = Kind("not_cached")
        /// A per-request override that does not fit the profile.
        public static let profile = Kind("profile")
        /// A plugin's stage failed in a way of its own.
        public static let stageFailed = Kind("stage_failed")
    }

    /// What kind of failure this is; tell cases apart by it.
    public let kind: Kind
    /// The cause, written for a person: "HTTP 404", "not an image (text/html)".
    public var reason: String
    /// What the layer that failed knows besides kind and reason (fetch: the HTTP status, curl's
    /// code, Retry-After; decode: the sniffed type). That layer's module offers typed accessors.
    public var details: (any ErrorDetails)?
    /// The source, redacted. The pipeline fills it in.
    public var source: String?

    /// A failure of `kind`, with a reason written for a person and the failing layer's details.
    public init(_ kind: Kind, _ reason: String, details: (any ErrorDetails)? = nil, source: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.details = details
        self.source = source
    }

    /// One line: "<source>: <reason>".
    public var description: String { source.map { "\($0): \(reason)" } ?? reason }

    /// The error a cancelled request gets.
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

extension ErrorField: Encodable {
    /// The bare JSON value: a number, or a string; a number that is not finite is null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        case .number(let value) where value.isFinite: try container.encode(value)
        case .number: try container.encodeNil()
        case .string(let text): try container.encode(text)
        }
    }
}
