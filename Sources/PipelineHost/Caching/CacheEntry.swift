/// A stored value: encoded bytes (with what is known about them) and when they stop being fresh.
/// An entry past `expiresAt` is not thrown away: it is revalidated, or served as the last good
/// image when a profile asks for that.
public struct CacheEntry: Sendable {
    /// The stored bytes, with their format and size.
    public var image: EncodedImage
    /// Seconds since 1970, wall clock: disk entries outlive the process.
    public var storedAt: Double
    /// When the entry stops being fresh (seconds since 1970); a stale entry still serves offline and as the last good image.
    public var expiresAt: Double
    /// For a variant: the version of the original it was made from (its ETag or Last-Modified).
    /// When the original is confirmed unchanged, the variant is still good and is not made again.
    public var origin: String?

    /// An entry made now or read back from a tier.
    public init(image: EncodedImage, storedAt: Double, expiresAt: Double, origin: String? = nil) {
        self.image = image
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.origin = origin
    }

    /// Whether the entry is still fresh at `now` (seconds since 1970).
    public func isFresh(at now: Double) -> Bool { now < expiresAt }

    /// Memory cost: the bytes it holds.
    public var cost: Int { image.bytes.count }
}

/// What a cache point stores: the original bytes right after the fetch, or a display-ready
/// variant further on. Originals follow HTTP's freshness; variants follow `ttl`.
public enum CacheLayer: String, Sendable, Codable {
    case original, variant
}
