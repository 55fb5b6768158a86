/// A set of stages. Built-in stages are plugins too, so third parties use exactly this API.
///
///     enum WatermarkPlugin: PipelinePlugin {
///         static func register(in registry: inout StageRegistry) throws {
///             try registry.register(StageDefinition(name: "watermark", ...))
///         }
///     }
public protocol PipelinePlugin {
    static func register(in registry: inout StageRegistry) throws
}
