/// A stage as a profile configured it.
public struct ConfiguredStage: Sendable {
    /// The stage's definition: name, version, kinds and parameters.
    public let definition: StageDefinition
    /// The parameters, checked, defaults filled in.
    public let parameters: StageParameters
    /// The line of the profile file that wrote it.
    public let line: Int
    /// The stage made from them.
    public let stage: any Stage
    /// Made once here: every request's keys are built from it.
    public let identity: StageIdentity
    /// The stage as a synchronous key stage, and its cache policy if it is `cache`: looked up
    /// once here rather than cast on every request.
    let rewriter: (any SourceRewriter)?
    let cachePolicy: CachePolicy?

    /// A stage as a profile configured it at `line`.
    public init(definition: StageDefinition, parameters: StageParameters, line: Int, stage: any Stage) {
        self.definition = definition
        self.parameters = parameters
        self.line = line
        self.stage = stage
        let detail = stage.identityDetail.map { ",#" + $0 } ?? ""
        identity = StageIdentity(
            name: definition.name, version: definition.version, parameters: parameters.canonical + detail)
        rewriter = stage as? any SourceRewriter
        cachePolicy = (stage as? CacheStage)?.policy
    }

    /// The stage's name.
    public var name: String { definition.name }
}

/// A named, type-checked chain of stages.
public struct Profile: Sendable {
    /// The profile's name.
    public let name: String
    /// The file that defines it.
    public let file: String
    /// The line it is declared on.
    public let line: Int
    /// Its stages, in order.
    public let stages: [ConfiguredStage]
    /// The stage `info` runs after this profile's decode: the profile's own `info { ... }`, or
    /// the registry's with its defaults; nil when no plugin registers one.
    public let info: ConfiguredStage?
    /// Whether the profile writes `info { ... }` itself: only then does serve answer `/info`
    /// for it, so a public image URL never publishes more about its original than the image.
    public let declaresInfo: Bool
    /// The profile's `fallback { ... }`, if it has one; its stage is a `Fallback`.
    public let fallback: ConfiguredStage?
    /// What a request may choose (`params { ... }`), by name.
    public let options: [ProfileOption]

    package init(
        name: String, file: String, line: Int, stages: [ConfiguredStage], info: ConfiguredStage? = nil,
        declaresInfo: Bool = false, fallback: ConfiguredStage? = nil, options: [ProfileOption] = []
    ) {
        self.name = name
        self.file = file
        self.line = line
        self.stages = stages
        self.info = info
        self.declaresInfo = declaresInfo
        self.fallback = fallback
        self.options = options
    }

    /// The same profile with other stages (serve's service defaults written in), everything
    /// else as it was.
    public func with(stages: [ConfiguredStage]) -> Profile {
        Profile(
            name: name, file: file, line: line, stages: stages, info: info, declaresInfo: declaresInfo,
            fallback: fallback, options: options)
    }

    /// The fallback setting, typed.
    public var fallbackSetting: Fallback? { fallback?.stage as? Fallback }
}

/// Every profile one file defines, in the order it defines them.
public struct ProfileSet: Sendable {
    /// The profile file.
    public let file: String
    /// The profiles, in the order the file declares them.
    public let profiles: [Profile]

    /// How every sink shows a source: the built-in secret names and each name a key stage of
    /// any profile here declares (`SourceRewriter.secretQueryNames`).
    public let redaction: Redaction

    /// The chains made from the profiles for `info` and fallbacks, by name.
    private let derived: [String: Profile]

    package init(file: String, profiles: [Profile]) {
        self.file = file
        self.profiles = profiles
        let stages = profiles.flatMap { [$0.info, $0.fallback].compactMap { $0 } + $0.stages }
        redaction = Redaction(names: stages.reduce(into: []) { $0.formUnion($1.rewriter?.secretQueryNames ?? []) })
        var derived: [String: Profile] = [:]
        for profile in profiles {
            if let chain = DerivedChains.info(of: profile) { derived[Self.infoName(profile.name)] = chain }
            if let chain = DerivedChains.fallback(of: profile) { derived[Self.fallbackName(profile.name)] = chain }
        }
        self.derived = derived
    }

    /// The profile called `name`, if the file has one, or one of the chains made from them
    /// (`infoName`, `fallbackName`).
    public subscript(name: String) -> Profile? { profiles.first { $0.name == name } ?? derived[name] }

    /// The name of the chain that answers `info` for `profile`: its stages up to decode, then
    /// its info stage. "+" is not allowed in a profile's own name, so it never collides.
    public static func infoName(_ profile: String) -> String { profile + "+info" }
    /// The name of the chain that makes `profile`'s fallback: the fallback's bytes through the
    /// profile's stages after fetch.
    public static func fallbackName(_ profile: String) -> String { profile + "+fallback" }
    /// What answers in place of `request` when it fails: the profile's fallback file through its
    /// fallback chain, with the request's options that chain has. Its source is the fallback,
    /// never the failed source, so nothing is stored under the failed source's key.
    public func fallbackRequest(for request: ImageRequest) -> ImageRequest {
        let chain = Self.fallbackName(request.profile)
        return ImageRequest(
            source: Fallback.source(of: request.profile), profile: chain,
            overrides: applicable(request.overrides, to: chain))
    }
    /// The part of `overrides` that names stages the chain `name` has: a chain made from a
    /// profile (info, fallback) has only some of its stages, and an option may set another.
    public func applicable(_ overrides: StageChoices, to name: String) -> StageChoices {
        guard !overrides.isEmpty, let stages = self[name]?.stages.map(\.name) else { return overrides }
        return overrides.filter { stages.contains($0.key) }
    }

    /// Whether the file itself defines a profile called `name` (the chains made from them do
    /// not count: a URL or a command line names only the file's own).
    public func defines(_ name: String) -> Bool { profiles.contains { $0.name == name } }
    /// The profiles' names, in order.
    public var names: [String] { profiles.map(\.name) }
}
