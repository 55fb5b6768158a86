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
        identity = StageIdentity(name: definition.name, version: definition.version, parameters: parameters.canonical + detail)
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

    package init(name: String, file: String, line: Int, stages: [ConfiguredStage]) {
        self.name = name
        self.file = file
        self.line = line
        self.stages = stages
    }
}

/// Every profile one file defines, in the order it defines them.
public struct ProfileSet: Sendable {
    /// The profile file.
    public let file: String
    /// The profiles, in the order the file declares them.
    public let profiles: [Profile]

    package init(file: String, profiles: [Profile]) {
        self.file = file
        self.profiles = profiles
    }

    /// The profile called `name`, if the file has one.
    public subscript(name: String) -> Profile? { profiles.first { $0.name == name } }
    /// The profiles' names, in order.
    public var names: [String] { profiles.map(\.name) }
}
