/// A request resolved against its profile: the stages to run, with the request's overrides
/// applied. Key stages (source to source) come first and run inline; the rest are `steps`,
/// whose prefixes are shared between requests. `cache` stages are not steps: each one is a
/// policy on the step before it.
struct RequestPlan: Sendable {
    let keyStages: [ConfiguredStage]
    let steps: [ConfiguredStage]
    /// The cache policy after step i, by i.
    let caches: [Int: CachePolicy]
    /// The names the profile set calls secret, which the request's source hides wherever it
    /// is shown (`Source.shownSecrets`).
    let secretNames: Set<String>

    init(_ request: ImageRequest, in profiles: ProfileSet) throws(PipelineError) {
        guard let profile = profiles[request.profile] else {
            throw PipelineError(.profile, "no profile named \"\(request.profile)\" in \(profiles.file)")
        }
        var stages = profile.stages
        for (name, changes) in request.overrides {
            guard let index = stages.firstIndex(where: { $0.name == name }) else {
                throw PipelineError(
                    .profile, "override for \(name), but profile \"\(profile.name)\" has no \(name) stage")
            }
            do {
                stages[index] = try stages[index].overriding(changes)
            } catch {
                throw PipelineError(
                    .profile, "override: \(error.message.hasPrefix(name) ? "" : "\(name): ")\(error.message)")
            }
        }
        do {
            stages = try Self.keepingAnimations(stages)
        } catch {
            throw PipelineError(.profile, "profile \"\(profile.name)\": \(error.message)")
        }
        let split = stages.firstIndex { $0.definition.role != .key } ?? stages.endIndex
        keyStages = Array(stages[..<split])
        var steps: [ConfiguredStage] = [], caches: [Int: CachePolicy] = [:]
        for stage in stages[split...] {
            if let policy = stage.cachePolicy, !steps.isEmpty {
                caches[steps.count - 1] = policy
            } else {
                steps.append(stage)
            }
        }
        self.steps = steps
        self.caches = caches
        secretNames = profiles.redaction.names
    }

    /// The cache point after each step, if any: a cache stage after the fetch keeps originals,
    /// one after any other step keeps variants. None while the cache is off.
    func cachePoints(settings: CacheSettings, profileFile: String) -> [CachePoint?] {
        steps.indices.map { step in
            guard settings.mode != .off, let policy = caches[step] else { return nil }
            let layer: CacheLayer = steps[step].definition.role == .fetch ? .original : .variant
            return CachePoint(policy, layer: layer, settings: settings, profileFile: profileFile)
        }
    }

    /// A stage that opens frames and leaves their count out keeps `whenAnimated` of them when a
    /// later stage writes animations with the request's parameters (`AnimationRole`); else the
    /// stages are as they were.
    static func keepingAnimations(_ stages: [ConfiguredStage]) throws(ParameterError) -> [ConfiguredStage] {
        var stages = stages
        for index in stages.indices {
            guard case .opensFrames(let parameter, let count)? = stages[index].definition.capabilities.animation,
                !stages[index].parameters.explicit.contains(parameter),
                stages[(index + 1)...].contains(where: {
                    if case .writesFrames(_, let animates)? = $0.definition.capabilities.animation {
                        return animates($0.parameters)
                    }
                    return false
                })
            else { continue }
            stages[index] = try stages[index].overriding([parameter: .integer(count)])
        }
        return stages
    }
}

extension ProfileSet {
    /// Every disk directory the profiles keep entries in under `settings`: what a purge clears.
    func cacheDirectories(settings: CacheSettings) -> Set<String> {
        guard settings.mode != .off else { return [] }
        var directories = Set(settings.directory.map { [$0] } ?? [])
        for profile in profiles {
            guard let plan = try? RequestPlan(ImageRequest(source: "", profile: profile.name), in: self) else {
                continue
            }
            for point in plan.cachePoints(settings: settings, profileFile: file) {
                if let directory = point?.directory { directories.insert(directory) }
            }
        }
        return directories
    }
}

/// The shared part of a request after its key stages: the source, the steps and the key of
/// every prefix of them. Equal keys at a step mean equal values there.
struct Chain: Sendable {
    let source: Source
    let steps: [ConfiguredStage]
    let keys: [StageKey]
    /// The cache point after each step, if any.
    let caches: [CachePoint?]
    /// The host transfers count against, for the per-host limit; nil for files.
    let host: String?
    /// The profile's fetch stage, which stages reach through their context (an overlay's URL).
    let fetcher: (any Stage)?

    init(source: Source, plan: RequestPlan, settings: CacheSettings, profileFile: String) {
        self.source = source
        self.steps = plan.steps
        caches = plan.cachePoints(settings: settings, profileFile: profileFile)
        // A local file's version (a stat) is in every key: the file at a path can change.
        var key = StageKey(source: source.key, version: FileVersion.of(source.location))
        var keys: [StageKey] = []
        for step in steps {
            key.append(step.identity)
            keys.append(key)
        }
        self.keys = keys
        host = Chain.host(of: source.key)
        fetcher = steps.first { $0.definition.role == .fetch }?.stage
    }

    /// The step before `step` whose cache point keeps the original, if any.
    func originalStep(before step: Int) -> Int? {
        caches[..<step].lastIndex { $0?.layer == .original }
    }

    /// "http://Example.com:8080/a?b" -> "example.com:8080"; nil for paths and file URLs.
    static func host(of key: String) -> String? {
        SourceLocation(key).hostAndPort
    }
}
