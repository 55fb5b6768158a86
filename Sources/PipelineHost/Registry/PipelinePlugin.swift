/// A set of stages. Built-in stages are plugins too, so third parties use exactly this API.
///
///     enum WatermarkPlugin: PipelinePlugin {
///         static let apiVersion = PluginAPIVersion(major: 1, minor: 0)
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
}

extension PipelinePlugin {
    /// The version of the pipelinehost the plugin is built with.
    public static var apiVersion: PluginAPIVersion { .current }
}
