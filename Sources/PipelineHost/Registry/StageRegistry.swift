/// Every stage a host knows, by name. Profiles are checked against it, and the Lua sandbox
/// generates one constructor per registered name.
public struct StageRegistry: Sendable {
    /// Two plugins registered one stage name.
    public struct DuplicateStage: Error, CustomStringConvertible {
        /// The stage name both plugins use.
        public let name: String
        public var description: String { "two plugins register a stage named '\(name)'" }
    }

    public private(set) var definitions: [String: StageDefinition] = [:]
    /// Names a profile may use that are not built yet, with the reason shown when they are used.
    public private(set) var planned: [String: String] = [:]

    /// Announces a stage that is not built yet: a profile that uses it gets `reason`.
    public mutating func plan(_ name: String, reason: String) {
        if definitions[name] == nil { planned[name] = reason }
    }

    /// An empty registry.
    public init() {}

    /// A registry with these plugins' stages. The `cache` stage is a plugin like the others
    /// (`CachePlugin`), which the pipeline carries out itself: list it where profiles may cache.
    public init(plugins: [any PipelinePlugin.Type]) throws {
        for plugin in plugins { try plugin.register(in: &self) }
    }

    /// Adds a stage; throws `DuplicateStage` when its name is taken.
    public mutating func register(_ definition: StageDefinition) throws {
        guard definitions[definition.name] == nil else { throw DuplicateStage(name: definition.name) }
        definitions[definition.name] = definition
        planned[definition.name] = nil
    }

    /// The definition of the stage called `name`.
    public subscript(name: String) -> StageDefinition? { definitions[name] }

    /// Registered names, sorted.
    public var names: [String] { definitions.keys.sorted() }

    /// Every name a profile can call: registered and planned.
    public var callableNames: [String] { (Array(definitions.keys) + Array(planned.keys)).sorted() }
}
