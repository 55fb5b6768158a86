/// What the origin said about keeping its bytes: HTTP's validators and freshness, as a fetch
/// stage read them from the response. The cache stage stores them with the bytes and uses them
/// to decide when to ask again and how (a conditional request).
public struct CacheHints: Sendable, Hashable, Codable {
    /// The validators a conditional request sends back (If-None-Match, If-Modified-Since).
    public var validators: Validators
    /// Seconds the bytes stay fresh, from Cache-Control max-age or Expires; nil when the
    /// response did not say, and the cache stage's `ttl` applies.
    public var maxAge: Double?
    /// Cache-Control: no-store. Nothing made from these bytes is stored anywhere.
    public var noStore: Bool
    /// The Cache-Control and Expires headers as sent, kept in disk metadata for inspection.
    public var cacheControl: String?
    /// The Expires header as sent.
    public var expires: String?

    /// Hints from one response.
    public init(
        validators: Validators = Validators(), maxAge: Double? = nil, noStore: Bool = false,
        cacheControl: String? = nil, expires: String? = nil
    ) {
        self.validators = validators
        self.maxAge = maxAge
        self.noStore = noStore
        self.cacheControl = cacheControl
        self.expires = expires
    }
}

/// An HTTP entity's validators.
public struct Validators: Sendable, Hashable, Codable {
    /// The ETag header as sent.
    public var etag: String?
    /// The Last-Modified header as sent.
    public var lastModified: String?

    /// Validators from a response.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether there is nothing to validate with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }

    /// One string for the entity's version: its ETag, else its Last-Modified date; nil without
    /// either. Equal versions mean the same bytes, so what was made from one still holds.
    public var version: String? {
        if let etag { return "etag " + etag }
        return lastModified.map { "last-modified " + $0 }
    }
}
