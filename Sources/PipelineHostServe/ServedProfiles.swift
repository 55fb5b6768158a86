import PipelineHost

/// A profile file as serve runs it. A public service fetches what strangers ask for, so a fetch
/// stage's `block_private` defaults to on and its `schemes` to http and https; a profile that
/// writes either parameter itself keeps what it wrote.
struct ServedProfiles: Sendable {
    let set: ProfileSet
    /// Profiles whose encode says `format = "auto"`: the format follows the client's Accept.
    let autoFormat: Set<String>

    /// What serve changes in a fetch stage unless the profile wrote the parameter itself.
    static let fetchDefaults: [String: ParameterValue] = [
        "block_private": .boolean(true),
        "schemes": .stringList(["http", "https"]),
    ]

    /// `allowedHosts` (--allow-source-host) goes to every fetch stage as `allow_hosts`, so the
    /// fetch holds each redirect to the list the source was checked against.
    init(_ loaded: ProfileSet, allowedHosts: Set<String> = []) throws(ParameterError) {
        var fetchDefaults = Self.fetchDefaults
        if !allowedHosts.isEmpty { fetchDefaults["allow_hosts"] = .stringList(allowedHosts.sorted()) }
        var profiles: [Profile] = []
        var auto: Set<String> = []
        for profile in loaded.profiles {
            var stages: [ConfiguredStage] = []
            for stage in profile.stages {
                let changes = stage.definition.role == .fetch
                    ? fetchDefaults.filter { name, _ in
                        stage.definition.parameters.contains { $0.name == name } && !stage.parameters.explicit.contains(name)
                    }
                    : [:]
                stages.append(changes.isEmpty ? stage : try stage.overriding(changes))
                if stage.name == "encode", stage.parameters.string("format") == "auto" { auto.insert(profile.name) }
            }
            profiles.append(Profile(name: profile.name, file: profile.file, line: profile.line, stages: stages))
        }
        set = ProfileSet(file: loaded.file, profiles: profiles)
        autoFormat = auto
    }
}
