/// One thing to make: a source run through a named profile, optionally with some stage
/// parameters changed for this request only.
public struct ImageRequest: Sendable, Hashable {
    /// A URL (http, https, file) or a local path, exactly as the user gave it.
    public var source: String
    /// The profile to run the source through.
    public var profile: String
    /// Per-request parameters by stage name, e.g. `["downsample": ["size": .integer(64)]]`.
    /// They are checked like profile parameters and are part of the key, so a 64 px and a
    /// 300 px request never share a result, though they still share the download.
    public var overrides: StageChoices

    /// A request for `source` through `profile`, with parameters overridden for this request only (checked like the profile's, and part of the key).
    public init(source: String, profile: String, overrides: StageChoices = [:]) {
        self.source = source
        self.profile = profile
        self.overrides = overrides
    }
}
