import Crypto

/// A step of a profile, made from a definition and its parameters.
///
/// A stage transforms one value; it must not keep per-request state between calls, because the
/// pipeline may run it for many requests at once.
public protocol Stage: Sendable {
    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue

    /// What else the stage's output depends on, beyond its parameters: the digest of a file it
    /// read when it was made (an overlay's image, say). Part of its identity, so changing the
    /// file makes new variants. Nil for most stages.
    var identityDetail: String? { get }
}

extension Stage {
    /// Most stages depend on their parameters only.
    public var identityDetail: String? { nil }
}

/// A key stage that rewrites a source without waiting for anything (normalize, request
/// signing). The pipeline calls `rewrite` in place instead of `run`: key stages run on every
/// request, memory hits included, and an async call would cost two executor hops each.
public protocol SourceRewriter: Stage {
    func rewrite(_ source: Source) throws -> Source
    /// Query parameters this stage treats as secrets whatever the source (it adds them to
    /// `Source.volatileParameters` too): every sink hides their values from the moment a request
    /// is made, before the stage has run (`ProfileSet.redaction`). None by default. (Plugin API 1.5.)
    var secretQueryNames: Set<String> { get }
}

extension SourceRewriter {
    /// No secret names of its own: the built-in ones and the other stages' still apply.
    public var secretQueryNames: Set<String> { [] }
}

extension SourceRewriter {
    public func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard case .source(let source) = input else { throw PipelineError(.stageFailed, "a key stage needs a source") }
        return .source(try rewrite(source))
    }
}

/// What a stage is: its name, version, the value kinds it takes and gives, its parameters, and
/// a factory. Registered by a plugin; profiles refer to it by name.
public struct StageDefinition: Sendable {
    /// The name profiles call it by.
    public let name: String
    /// Bump when the stage's output changes for the same input and parameters, so stored
    /// variants made by the old algorithm are not served.
    public let version: Int
    /// One line for `pipelinehost stages`.
    public let summary: String
    /// What it takes.
    public let input: ValueKind
    /// What it gives.
    public let output: ValueKind
    /// Which queue it waits in and which metric its time counts toward.
    public let role: StageRole
    /// Its parameters, checked when a profile loads.
    public let parameters: [ParameterSpec]
    /// Makes the stage from checked parameters; throw a ParameterError for a bad combination.
    public let make: @Sendable (StageParameters) throws -> any Stage
    /// What a host may ask of it beyond running it (a format it may choose, safe defaults for
    /// a public service). (Plugin API 1.1.)
    public let capabilities: StageCapabilities

    /// A stage definition; `role` is inferred from the kinds unless given.
    public init(
        name: String, version: Int = 1, summary: String, input: ValueKind, output: ValueKind,
        role: StageRole? = nil, capabilities: StageCapabilities = StageCapabilities(),
        parameters: [ParameterSpec], make: @escaping @Sendable (StageParameters) throws -> any Stage
    ) {
        self.name = name
        self.version = version
        self.summary = summary
        self.input = input
        self.output = output
        self.role = role ?? .inferred(input: input, output: output)
        self.parameters = parameters
        self.make = make
        self.capabilities = capabilities
    }
}

/// A stage's identity: name, version and canonical parameters. Part of every key, so changing a
/// parameter or an algorithm never serves a stale variant.
public struct StageIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The stage's name.
    public let name: String
    /// The stage's version.
    public let version: Int
    /// The canonical parameters, sorted: part of every key.
    public let parameters: String

    public var description: String { "\(name)@\(version)(\(parameters))" }

    /// A short hex digest of `bytes` (SHA-256), for a stage's `identityDetail`.
    public static func digest(of bytes: some Sequence<UInt8>) -> String {
        SHA256.hash(data: Array(bytes)).prefix(16).hexDigits
    }
}
