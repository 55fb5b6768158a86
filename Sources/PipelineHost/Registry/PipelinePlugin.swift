/// A set of stages. Built-in stages are plugins too, so third parties use exactly this API.
///
///     enum WatermarkPlugin: PipelinePlugin {
///         static let apiVersion = PluginAPIVersion(major: 1, minor: 1)
///         static func register(in registry: inout StageRegistry) throws {
///             try registry.register(StageDefinition(name: "watermark", ...))
///         }
///     }
public protocol PipelinePlugin {
    /// The plugin API version the plugin is written for. A host refuses a plugin of another
    /// major version, or of a newer minor one (`StageRegistry.IncompatiblePlugin`). Left out,
    /// it is the version of the pipelinehost the plugin is built with.
    static var apiVersion: PluginAPIVersion { get }

    static func register(in registry: inout StageRegistry) throws

    /// Whether this plugin's stages can write `format` ("avif", "jxl", ...). A host asks before it
    /// lets `encode { format = "auto" }` choose a format, so the command line and serve know no
    /// imaging library. False unless a plugin says so. (Plugin API 1.1.)
    static func canEncode(_ format: String) -> Bool

    /// How many threads one operation of the plugin's own library may use. A host calls it before
    /// work starts: the cores shared out over a batch's concurrent jobs, 1 in serve, where many
    /// requests already run at once. Nothing by default. (Plugin API 1.1.)
    static func setThreadsPerOperation(_ threads: Int)
}

extension PipelinePlugin {
    /// The version of the pipelinehost the plugin is built with.
    public static var apiVersion: PluginAPIVersion { .current }

    /// No format: the plugin writes none.
    public static func canEncode(_ format: String) -> Bool { false }

    /// Nothing to set.
    public static func setThreadsPerOperation(_ threads: Int) {}
}

extension [any PipelinePlugin.Type] {
    /// Whether any of these plugins writes `format`.
    public func canEncode(_ format: String) -> Bool { contains { $0.canEncode(format) } }

    /// Tells every plugin how many threads one operation may use.
    public func setThreadsPerOperation(_ threads: Int) {
        for plugin in self { plugin.setThreadsPerOperation(threads) }
    }
}
