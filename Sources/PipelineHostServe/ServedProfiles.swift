import PipelineHost

/// A profile file as serve runs it. A public service fetches what strangers ask for, so each
/// stage gets the defaults it declares for one (`StageCapabilities.publicServiceDefaults`:
/// fetch's `block_private` on, `schemes` http and https); a profile that writes such a parameter
/// itself keeps what it wrote. Serve goes by what stages declare, never by their names.
struct ServedProfiles: Sendable {
    let set: ProfileSet

    /// `allowedHosts` (--allow-source-host) goes to every stage that declares an allowed-hosts
    /// parameter (fetch's `allow_hosts`), so the fetch holds each redirect to the list the source
    /// was checked against.
    init(_ loaded: ProfileSet, allowedHosts: Set<String> = []) throws(ParameterError) {
        var profiles: [Profile] = []
        for profile in loaded.profiles {
            var stages: [ConfiguredStage] = []
            for stage in profile.stages {
                let capabilities = stage.definition.capabilities
                var defaults = capabilities.publicServiceDefaults
                if let hosts = capabilities.allowedHostsParameter, !allowedHosts.isEmpty {
                    defaults[hosts] = .stringList(allowedHosts.sorted())
                }
                let changes = defaults.filter { name, _ in
                    stage.definition.parameters.contains { $0.name == name }
                        && !stage.parameters.explicit.contains(name)
                }
                stages.append(changes.isEmpty ? stage : try stage.overriding(changes))
            }
            profiles.append(profile.with(stages: stages))
        }
        set = ProfileSet(file: loaded.file, profiles: profiles)
    }
}
