/// The chains a profile implies besides its own: the one `info` runs and the one that makes its
/// fallback. Each reuses the profile's stages as configured, so the shared steps (the fetch,
/// the stored original, decode) have the same keys as the profile's and are shared with it.
enum DerivedChains {
    /// The profile's stages up to and including its decode (the first stage from encoded bytes
    /// to an image) and the stages right after it that find something in the image (faces),
    /// then its info stage, then a memory cache: nil without a decode or an info stage.
    static func info(of profile: Profile) -> Profile? {
        guard let info = profile.info,
            let decode = profile.stages.firstIndex(where: {
                $0.definition.input == .encoded && $0.definition.output == .image
            })
        else { return nil }
        var end = decode
        while end + 1 < profile.stages.count, profile.stages[end + 1].definition.capabilities.finds != nil { end += 1 }
        let stages = Array(profile.stages[...end]) + [info] + kept(after: profile)
        return Profile(name: ProfileSet.infoName(profile.name), file: profile.file, line: info.line, stages: stages)
    }

    /// The fallback's bytes, then the profile's stages from the first one after fetch that is
    /// not a cache (decode, usually), then a memory cache: nil without a fallback.
    static func fallback(of profile: Profile) -> Profile? {
        guard let fallback = profile.fallback,
            let first = profile.stages.firstIndex(where: {
                $0.definition.input == .encoded && $0.definition.role != .cache
            })
        else { return nil }
        var stages = [fallback] + profile.stages[first...]
        if stages.last?.definition.role != .cache { stages += kept(after: profile) }
        return Profile(
            name: ProfileSet.fallbackName(profile.name), file: profile.file, line: fallback.line, stages: stages)
    }

    /// The profile's last stage when it is a cache (its variants' policy), else a memory cache.
    private static func kept(after profile: Profile) -> [ConfiguredStage] {
        if let last = profile.stages.last, last.definition.role == .cache { return [last] }
        let definition = CachePlugin.definition
        // The cache stage's parameters all have defaults, so an empty table always checks.
        guard var parameters = try? ParameterChecker(definition: definition).check(WrittenTable()) else { return [] }
        parameters.profileFile = profile.file
        return [
            ConfiguredStage(
                definition: definition, parameters: parameters, line: profile.line,
                stage: CacheStage(policy: CachePolicy(parameters)))
        ]
    }
}
