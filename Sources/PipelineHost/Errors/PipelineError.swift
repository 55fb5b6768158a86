/// Why one request failed. A public struct around an open set of kinds, so new cases can be added
/// without breaking callers (the async-http-client pattern). What only one layer knows (an
/// HTTP status, a sniffed media type) travels in `details`, a payload that layer defines: the
/// core knows kinds, reasons and sources, and nothing of HTTP or image formats.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// A kind of failure. An open set: a plugin can add kinds of its own, such as the CLI's
    /// `output_failed`, and they cannot collide with the core's.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The name `--json` prints, such as "http_status".
        public let name: String
        /// A plugin's own kind. It cannot be mistaken for one of the core's: a name the core
        /// uses comes out as "plugin_<name>", so a caller that tells kinds apart (serve's status
        /// table, the shared cache's negative entries) never takes it for the core's.
        public init(_ name: String) { self.name = Self.coreNames.contains(name) ? "plugin_" + name : name }
        /// The kind a name stands for, read back from where a kind was written (a shared cache's
        /// negative entry): the core's own kind when the name is one of them.
        public init(named name: String) { self.name = name }
        private init(core name: String) { self.name = name }
        public var description: String { name }

        /// The names of the core's kinds.
        static let coreNames: Set<String> = [
            "invalid_source", "http_status", "transport", "timeout", "too_large", "not_an_image",
            "unsupported_format", "pixel_limit", "decode_failed", "encode_failed", "blocked", "cancelled",
            "not_cached", "profile", "stage_failed", "overloaded",
        ]

        /// Empty, malformed or disallowed sources, and redirects to a scheme that is not allowed.
        public static let invalidSource = Kind(core: "invalid_source")
        /// A non-2xx answer, after any retries.
        public static let httpStatus = Kind(core: "http_status")
        /// A connection refused or dropped, or too many redirects.
        public static let transport = Kind(core: "transport")
        /// The transfer passed `timeout`, `connect_timeout` or the low-speed limit.
        public static let timeout = Kind(core: "timeout")
        /// The body or the headers passed their limit.
        public static let tooLarge = Kind(core: "too_large")
        /// Bytes that are HTML, XML, JSON, SVG, text, or empty.
        public static let notAnImage = Kind(core: "not_an_image")
        /// Bytes no accepted loader reads, or a blocked loader.
        public static let unsupportedFormat = Kind(core: "unsupported_format")
        /// Over `max_pixels` or `max_frames`, from the header.
        public static let pixelLimit = Kind(core: "pixel_limit")
        /// A damaged or truncated image.
        public static let decodeFailed = Kind(core: "decode_failed")
        /// The image could not be encoded in the asked format.
        public static let encodeFailed = Kind(core: "encode_failed")
        /// Refused by policy: an address block_private forbids.
        public static let blocked = Kind(core: "blocked")
        /// Nobody waits for the request any more.
        public static let cancelled = Kind(core: "cancelled")
        /// Offline, and the cache holds nothing for the request.
        public static let notCached = Kind(core: "not_cached")
        /// A per-request override that does not fit the profile.
        public static let profile = Kind(core: "profile")
        /// The memory budget could not take the work within the wait it allows: come back later.
        public static let overloaded = Kind(core: "overloaded")
        /// A plugin's stage failed in a way of its own.
        public static let stageFailed = Kind(core: "stage_failed")
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

    /// The status an upstream server answered, when the failure is one: the fact that serve's
    /// status table and the shared cache's negative entries read, typed, from whichever layer
    /// fetched. Nil by default. (Plugin API 1.1.)
    var upstreamStatus: Int? { get }

    /// Whether the failure is this node's own configuration (a credential or signature the
    /// source's store refused) rather than the source's: nothing shared remembers it, since
    /// the next node, or this one once fixed, would succeed. False by default. (Plugin API 1.3.)
    var isLocalConfiguration: Bool { get }
}

extension ErrorDetails {
    /// No upstream status.
    public var upstreamStatus: Int? { nil }
    /// The source's failure, not the node's.
    public var isLocalConfiguration: Bool { false }
}

extension PipelineError {
    /// The status the upstream server answered, from the failing layer's details.
    public var upstreamStatus: Int? { details?.upstreamStatus }
    /// Whether the failing layer blames this node's configuration (`ErrorDetails.isLocalConfiguration`).
    public var isLocalConfiguration: Bool { details?.isLocalConfiguration ?? false }
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
