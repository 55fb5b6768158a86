/// What a host may ask of a stage beyond running it, declared by the stage's plugin, so a host
/// (serve, the command line) never goes by a stage's name.
public struct StageCapabilities: Sendable {
    /// The parameter that names the output format, when the stage can follow the viewer:
    /// written as "auto" in a profile, the host sets it per request (encode's `format`).
    public var formatParameter: String?
    /// Values a public service gives these parameters unless the profile wrote them itself
    /// (fetch's `block_private` and `schemes`): what is safe for strangers' sources.
    public var publicServiceDefaults: [String: ParameterValue]
    /// The parameter that takes the hosts a service allows sources on, for a stage that must
    /// hold redirects to them as well (fetch's `allow_hosts`).
    public var allowedHostsParameter: String?
    /// Set for an entry that configures the profile rather than taking a place in its chain
    /// (`info`, `fallback`): the loader keeps it out of the chain and hands it to the profile.
    public var profileSetting: ProfileSetting?
    /// How the stage takes part in keeping animations animated (plugin API 1.7).
    public var animation: AnimationRole?
    /// What the stage finds in the image and passes along with it, unchanged otherwise ("faces"):
    /// info runs it too, and a stage that `needsFound` it must come after it (plugin API 1.8).
    public var finds: String?
    /// What the stage, with these parameters, needs an earlier stage to have found (downsample's
    /// `gravity = "faces"`): the profile loader refuses the chain without one (plugin API 1.8).
    public var needsFound: (@Sendable (StageParameters) -> String?)?

    /// Capabilities; none by default.
    public init(
        formatParameter: String? = nil, publicServiceDefaults: [String: ParameterValue] = [:],
        allowedHostsParameter: String? = nil, profileSetting: ProfileSetting? = nil,
        animation: AnimationRole? = nil, finds: String? = nil,
        needsFound: (@Sendable (StageParameters) -> String?)? = nil
    ) {
        self.finds = finds
        self.needsFound = needsFound
        self.formatParameter = formatParameter
        self.publicServiceDefaults = publicServiceDefaults
        self.allowedHostsParameter = allowedHostsParameter
        self.profileSetting = profileSetting
        self.animation = animation
    }
}

/// The two ends of a chain that keeps animations: the stage that opens an image decides how
/// many frames to keep, and only the stage that writes the output knows whether it can animate.
/// A request's plan joins them (`RequestPlan`), after the request's choices, so a profile that
/// writes a JPEG never decodes a GIF's other frames, and one that writes WebP or GIF keeps them.
public enum AnimationRole: Sendable {
    /// Opens images: `parameter` counts the frames kept. Left out of the profile, it becomes
    /// `whenAnimated` when a later stage writes animations; else it keeps its own default.
    case opensFrames(parameter: String, whenAnimated: Int)
    /// Writes the output: whether it keeps an animation animated with these parameters.
    /// `formatParameter` names the format animations are written in; written as "auto" (or
    /// left out while the stage's `formatParameter` is "auto"), the host chooses it from what
    /// the viewer accepts (`FormatChoice.chooseAnimated`).
    case writesFrames(formatParameter: String, animates: @Sendable (StageParameters) -> Bool)
}

/// The profile settings a host knows: entries written among a profile's stages that are not
/// steps of its chain.
public enum ProfileSetting: String, Sendable {
    /// The stage that describes an image for `pipelinehost info` and serve's `/info`: it takes
    /// the image as decode opened it and gives JSON. Written in a profile only to change its
    /// parameters; a profile without it gets the registry's with its defaults.
    case info
    /// The image a profile answers with when a source fails (`Fallback`).
    case fallback
}
