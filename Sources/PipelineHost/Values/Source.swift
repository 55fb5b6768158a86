/// Where an image comes from, and the stable key that names it.
///
/// `location` is what the fetch uses: the full URL or path, volatile parts and all. `key` is the
/// identity every later stage, cache and dedup table uses; key stages such as `normalize` rewrite
/// it and leave `location` alone.
public struct Source: Sendable, Hashable {
    /// What the fetch uses: the full URL or path, volatile parts and all.
    public var location: String
    /// The stable key every later stage, cache and in-flight table uses.
    public var key: String
    /// Query parameter names whose values are secrets or salts, never shown. Key stages also
    /// leave most of them out of `key` (normalize's drop_query); its redact_query keeps them.
    public var volatileParameters: Set<String>
    /// More names whose values are hidden wherever the source is shown: those the profile set
    /// calls secret (`ProfileSet.redaction`), set before any key stage runs. Not part of the
    /// source's identity, and not a part its key hides.
    public var shownSecrets: Set<String> = []
    /// Applied in order by the fetch stage, at transfer time only. Not part of the source's
    /// identity: two sources that differ only in signers are equal.
    public var signers: [any TransferSigner] = []
    /// Set by the cache when it holds a copy past its freshness: a fetch stage may send them as
    /// a conditional request and answer `EncodedImage.notModified`. Not part of the identity.
    public var validators: Validators?

    /// A source whose key is its location until a key stage rewrites it.
    public init(location: String, key: String? = nil, volatileParameters: Set<String> = []) {
        self.location = location
        self.key = key ?? location
        self.volatileParameters = volatileParameters
    }

    /// Whether `location` is a plain filesystem path rather than a URL.
    public static func isPlainPath(_ location: String) -> Bool {
        SourceLocation(location).isPlainPath
    }

    /// Whether the location carries parts the key leaves out: user information, a query
    /// parameter the key stages marked volatile, or a signer. Two requests with this key can
    /// then fetch different things, so a success is shared between them (that is what the key
    /// is for) but a failure is not: a wrong password must not fail the right one.
    public var keyHidesParts: Bool {
        guard signers.isEmpty else { return true }
        let location = SourceLocation(location)
        if location.userInfo != nil { return true }
        return location.queryItems.contains { item in
            volatileParameters.contains(String(item.prefix { $0 != "=" }))
        }
    }

    /// The location with credentials hidden, fit for any log line or output.
    public var redacted: String { Redactor.redact(location, extraNames: volatileParameters.union(shownSecrets)) }

    /// The location with every signer applied: what a transfer should use, and nothing else.
    public func signedLocation() throws(PipelineError) -> String {
        var location = location
        for signer in signers { location = try signer.sign(location) }
        return location
    }

    public static func == (a: Source, b: Source) -> Bool {
        a.location == b.location && a.key == b.key && a.volatileParameters == b.volatileParameters
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(location)
        hasher.combine(key)
        hasher.combine(volatileParameters)
    }
}
