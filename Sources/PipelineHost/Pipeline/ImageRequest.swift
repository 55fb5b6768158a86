/// One thing to make: a source run through a named profile.
public struct ImageRequest: Sendable, Hashable {
    /// A URL (http, https, file) or a local path, exactly as the user gave it.
    public var source: String
    public var profile: String

    public init(source: String, profile: String) {
        self.source = source
        self.profile = profile
    }
}
