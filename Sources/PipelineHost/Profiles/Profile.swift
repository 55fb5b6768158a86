/// A stage as a profile configured it.
public struct ConfiguredStage: Sendable {
    public let definition: StageDefinition
    public let parameters: StageParameters
    /// The line of the profile file that wrote it.
    public let line: Int
    public let stage: any Stage
    /// Made once here: every request's keys are built from it.
    public let identity: StageIdentity
    /// The stage as a synchronous key stage, and its cache policy if it is `cache`: looked up
    /// once here rather than cast on every request.
    let rewriter: (any SourceRewriter)?
    let cachePolicy: CachePolicy?

    public init(definition: StageDefinition, parameters: StageParameters, line: Int, stage: any Stage) {
        self.definition = definition
        self.parameters = parameters
        self.line = line
        self.stage = stage
        identity = StageIdentity(name: definition.name, version: definition.version, parameters: parameters.canonical)
        rewriter = stage as? any SourceRewriter
        cachePolicy = (stage as? CacheStage)?.policy
    }

    public var name: String { definition.name }
}

/// A named, type-checked chain of stages.
public struct Profile: Sendable {
    public let name: String
    public let file: String
    public let line: Int
    public let stages: [ConfiguredStage]

    package init(name: String, file: String, line: Int, stages: [ConfiguredStage]) {
        self.name = name
        self.file = file
        self.line = line
        self.stages = stages
    }
}

/// Every profile one file defines, in the order it defines them.
public struct ProfileSet: Sendable {
    public let file: String
    public let profiles: [Profile]

    package init(file: String, profiles: [Profile]) {
        self.file = file
        self.profiles = profiles
    }

    public subscript(name: String) -> Profile? { profiles.first { $0.name == name } }
    public var names: [String] { profiles.map(\.name) }
}
