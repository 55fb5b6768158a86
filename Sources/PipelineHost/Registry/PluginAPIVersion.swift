/// The version of the plugin API: what a plugin may call and implement (`PipelinePlugin`,
/// `StageRegistry`, `StageDefinition`, `Stage`, `StageValue`, `StageContext`, ...).
///
/// A plugin states the version it was written for. A host takes plugins of its own major
/// version and a minor version no newer than its own; it refuses others at start-up, naming
/// the plugin and both versions, rather than failing later in a way nobody can trace.
public struct PluginAPIVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Changes when the API changes in a way that breaks plugins.
    public let major: Int
    /// Changes when the API gains something; older plugins still work.
    public let minor: Int

    /// A version, such as `PluginAPIVersion(major: 1, minor: 0)`.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// The version this build of pipelinehost provides.
    ///
    /// 1.1 added `PipelinePlugin.canEncode` and `setThreadsPerOperation` (with defaults) and the
    /// `environmentVariable` parameter type. 1.2 added `ParameterList` (a stage's parameters
    /// declared once, read through key paths) and `ParameterChoice` (a choice read as an enum);
    /// 1.3 added `ErrorDetails.isLocalConfiguration` (with a default); 1.4 added
    /// `PipelineTracing` (the process's tracer, and the trace headers a stage's own requests
    /// carry); 1.5 added `SourceRewriter.secretQueryNames` (with a default), which every sink
    /// redacts through `ProfileSet.redaction`; 1.6 added
    /// `PipelineImage.predictedPeakBytes` (with a default), which the memory budget draws; 1.7 added
    /// `StageCapabilities.animation` (`AnimationRole`); 1.8 added `StageCapabilities.finds` and
    /// `needsFound` (a stage that finds faces, and one that crops by them). A plugin written for
    /// an older 1.x still loads.
    public static let current = PluginAPIVersion(major: 1, minor: 8)

    /// "1.3".
    public var description: String { "\(major).\(minor)" }

    /// Whether a host of version `self` runs a plugin written for `plugin`.
    public func runs(_ plugin: PluginAPIVersion) -> Bool {
        plugin.major == major && plugin.minor <= minor
    }

    public static func < (a: PluginAPIVersion, b: PluginAPIVersion) -> Bool {
        (a.major, a.minor) < (b.major, b.minor)
    }
}
