/// The `cache` stage. It is the host's own, registered through the same plugin API as every
/// other stage, but the pipeline carries it out: a lookup decides whether the stages before it
/// run at all, which no stage can decide from inside its own `run`.
///
/// Where it stands decides what it keeps: right after the fetch it keeps the original bytes;
/// after encode it keeps the display-ready variant.
public enum CachePlugin: PipelinePlugin {
    /// Seconds in a day, the unit of `ttl`'s default.
    public static let secondsPerDay = 86_400.0

    struct Keys: ParameterList {
        let memory = OptionalParameter<Bool>(
            "memory", .boolean,
            doc: "keep entries in the memory cache (default: true at the end, false after fetch)")
        let disk = OptionalParameter<Bool>(
            "disk", .boolean,
            doc: "keep entries in the disk cache (default: true after fetch, false at the end)")
        let ttl = Parameter<Double>(
            "ttl", .number(0...(3650 * secondsPerDay)), default: 7 * secondsPerDay,
            doc:
                "seconds an entry stays fresh when the server does not say (Cache-Control max-age or Expires win for originals)"
        )
        let onError = Parameter<CachePolicy.OnError>(
            "on_error", default: .fail,
            doc: "\"stale\": when fetching or revalidating fails, serve the last good entry, flagged stale")
        let directory = OptionalParameter<String>(
            "dir", .string,
            doc:
                "disk cache directory, relative to the profile file (default: $XDG_CACHE_HOME/pipelinehost; --cache-dir wins over both)"
        )
    }

    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(definition)
        try registry.register(Fallback.definition)
    }

    /// The `cache` stage's definition.
    static let definition = StageDefinition(
        name: "cache",
        summary: "Keep the bytes before it: after fetch, the original (on disk by default); at the "
            + "end, the display-ready variant (in memory by default). A later request is served "
            + "from memory, then disk, before anything runs again.",
        input: .encoded, output: .encoded, role: .cache,
        parameters: Keys.specs,
        make: { CacheStage(policy: CachePolicy($0)) })
}

/// A cache stage's parameters. `memory` and `disk` are nil when the profile left them out:
/// the place of the stage decides them (see `CachePoint`).
public struct CachePolicy: Sendable, Hashable {
    /// What a cache stage does when the stages before it fail: `fail`, or `stale` to serve the last good entry.
    public enum OnError: String, ParameterChoice { case fail, stale }

    /// Keep entries in memory; nil means the default for the stage's place (variants).
    public var memory: Bool?
    /// Keep entries on disk; nil means the default for the stage's place (originals).
    public var disk: Bool?
    /// Seconds an entry stays fresh when the origin says nothing.
    public var ttl: Double
    /// What happens when the work behind the stage fails.
    public var onError: OnError
    /// The disk cache directory, relative to the profile file; nil means the configured one.
    public var directory: String?

    /// A policy as a profile's `cache { ... }` writes it.
    public init(
        memory: Bool? = nil, disk: Bool? = nil, ttl: Double = 7 * CachePlugin.secondsPerDay,
        onError: OnError = .fail, directory: String? = nil
    ) {
        self.memory = memory
        self.disk = disk
        self.ttl = ttl
        self.onError = onError
        self.directory = directory
    }

    init(_ parameters: StageParameters) {
        typealias Keys = CachePlugin.Keys
        self.init(
            memory: parameters[\Keys.memory], disk: parameters[\Keys.disk], ttl: parameters[\Keys.ttl],
            onError: parameters[\Keys.onError], directory: parameters[\Keys.directory])
    }
}

/// The stage value of `cache`. Run on its own it passes its input through; in a pipeline the
/// `Pipeline` reads its policy and does the caching around the stages before it.
public struct CacheStage: Stage {
    /// The policy the pipeline carries out for this stage.
    public let policy: CachePolicy

    public func run(_ input: StageValue, in context: StageContext) async throws -> StageValue { input }
}
