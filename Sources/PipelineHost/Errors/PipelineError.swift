/// Why one request failed. A public struct around an open set of kinds, so new cases can be added
/// without breaking callers (the async-http-client pattern).
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
        /// The result could not be written where the caller asked (the CLI's output file).
        public static let outputFailed = Kind("output_failed")
    }

    public let kind: Kind
    /// The cause, written for a person: "HTTP 404", "not an image (text/html)".
    public var reason: String
    /// The HTTP status, for `.httpStatus`.
    public var httpStatus: Int?
    /// curl's numeric code, for `.transport` and `.timeout`.
    public var transportCode: Int?
    /// For `.httpStatus` 429 and 5xx: the server's Retry-After, in seconds from when it answered.
    public var retryAfter: Double?
    /// For `.notAnImage`: the sniffed media type.
    public var sniffedType: String?
    /// The source, redacted. The pipeline fills it in.
    public var source: String?

    public init(_ kind: Kind, _ reason: String, httpStatus: Int? = nil, transportCode: Int? = nil,
                sniffedType: String? = nil, source: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.httpStatus = httpStatus
        self.transportCode = transportCode
        self.sniffedType = sniffedType
        self.source = source
    }

    /// One line: "<source>: <reason>".
    public var description: String { source.map { "\($0): \(reason)" } ?? reason }

    public static func cancelled(_ reason: String = "cancelled") -> PipelineError {
        PipelineError(.cancelled, reason)
    }
}
