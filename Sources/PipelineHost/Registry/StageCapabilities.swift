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

    /// Capabilities; none by default.
    public init(
        formatParameter: String? = nil, publicServiceDefaults: [String: ParameterValue] = [:],
        allowedHostsParameter: String? = nil, profileSetting: ProfileSetting? = nil
    ) {
        self.formatParameter = formatParameter
        self.publicServiceDefaults = publicServiceDefaults
        self.allowedHostsParameter = allowedHostsParameter
        self.profileSetting = profileSetting
    }
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

extension ConfiguredStage {
    /// The format parameter this stage lets a host choose per request: its name, when the
    /// stage declares one and the profile wrote "auto" there.
    public var autoFormatParameter: String? {
        guard let name = definition.capabilities.formatParameter, parameters.string(name) == "auto" else { return nil }
        return name
    }
}

extension Profile {
    /// The override that makes every "auto" format of this profile `format`; empty when none
    /// says "auto".
    public func formatOverrides(_ format: String) -> [String: [String: ParameterValue]] {
        var overrides: [String: [String: ParameterValue]] = [:]
        for stage in stages {
            if let parameter = stage.autoFormatParameter {
                overrides[stage.name, default: [:]][parameter] = .string(format)
            }
        }
        return overrides
    }

    /// For a profile whose encode says format = "auto": the override that picks what a viewer
    /// accepting `accept` (an HTTP Accept header) gets, as serve and `run --accept` choose it.
    /// Nil for a profile whose format is fixed.
    public func autoFormatOverride(accept: String?, canWriteAVIF: Bool) -> [String: [String: ParameterValue]]? {
        guard stages.contains(where: { $0.autoFormatParameter != nil }) else { return nil }
        return formatOverrides(FormatChoice.choose(accept: accept, canWriteAVIF: canWriteAVIF))
    }
}

/// Per-request overrides merged stage by stage, `newer`'s value winning for a parameter both set.
public func mergeOverrides(
    _ overrides: inout [String: [String: ParameterValue]], with newer: [String: [String: ParameterValue]]
) {
    overrides.merge(newer) { $0.merging($1) { _, new in new } }
}
