/// Every stage a host knows, by name. Profiles are checked against it, and the Lua sandbox
/// generates one constructor per registered name.
public struct StageRegistry: Sendable {
    /// Two plugins registered one stage name.
    public struct DuplicateStage: Error, CustomStringConvertible {
        /// The stage name both plugins use.
        public let name: String
        /// The plugin that registered it first (nil for a direct `register` call).
        public let firstPlugin: String?
        /// The plugin that tried to register it again (nil for a direct `register` call).
        public let secondPlugin: String?
        public var description: String {
            let who = [firstPlugin, secondPlugin].map { $0 ?? "a direct register call" }
            return "two plugins register a stage named '\(name)': \(who[0]) and \(who[1])"
        }
    }

    /// A plugin written for a plugin API version this host does not provide.
    public struct IncompatiblePlugin: Error, CustomStringConvertible {
        /// The plugin's type name.
        public let plugin: String
        /// The version it is written for.
        public let version: PluginAPIVersion
        /// The version this host provides.
        public let host: PluginAPIVersion
        public var description: String {
            "plugin \(plugin) is written for plugin API \(version), and this pipelinehost provides \(host) "
                + "(it runs plugins for \(host.major).0 to \(host)); rebuild the plugin for \(host.major).x"
        }
    }

    public private(set) var definitions: [String: StageDefinition] = [:]
    /// Names a profile may use that are not built yet, with the reason shown when they are used.
    public private(set) var planned: [String: String] = [:]
    /// The plugin that registered each stage, by stage name.
    public private(set) var owners: [String: String] = [:]
    /// The plugin whose `register` runs now.
    private var registering: String?

    /// Announces a stage this build leaves out (a build option's, like the stock executable's
    /// `faces` without the trait Faces): a profile that uses it gets `reason`.
    public mutating func plan(_ name: String, reason: String) {
        if definitions[name] == nil { planned[name] = reason }
    }

    /// An empty registry.
    public init() {}

    /// A registry with these plugins' stages. The `cache` stage is a plugin like the others
    /// (`CachePlugin`), which the pipeline carries out itself: list it where profiles may cache.
    /// A plugin for another plugin API version is refused (`IncompatiblePlugin`).
    public init(plugins: [any PipelinePlugin.Type]) throws {
        for plugin in plugins {
            let name = _typeName(plugin, qualified: false)  // as String(describing:), without its conformance lookups
            guard PluginAPIVersion.current.runs(plugin.apiVersion) else {
                throw IncompatiblePlugin(plugin: name, version: plugin.apiVersion, host: .current)
            }
            registering = name
            try plugin.register(in: &self)
        }
        registering = nil
    }

    /// Adds a stage; throws `DuplicateStage` when its name is taken.
    public mutating func register(_ definition: StageDefinition) throws {
        guard definitions[definition.name] == nil else {
            throw DuplicateStage(name: definition.name, firstPlugin: owners[definition.name], secondPlugin: registering)
        }
        definitions[definition.name] = definition
        owners[definition.name] = registering
        planned[definition.name] = nil
    }

    /// The definition of the stage called `name`.
    public subscript(name: String) -> StageDefinition? { definitions[name] }

    /// Registered names, sorted.
    public var names: [String] { definitions.keys.sorted() }

    /// Every name a profile can call: registered and planned.
    public var callableNames: [String] { (Array(definitions.keys) + Array(planned.keys)).sorted() }
}
