import Logging

/// What a stage may use while it runs, and nothing that could break the pipeline's guarantees.
public struct StageContext: Sendable {
    /// The request's source, redacted: safe to log.
    public var source: String {
        switch origin {
        case .redacted(let text): text
        case .source(let source): source.redacted
        }
    }
    /// A logger for the stage's messages; its metadata carries the redacted source.
    public let logger: Logger
    /// The profile's fetch stage, for a stage that needs a resource of its own (an overlay from
    /// a URL): fetching through it applies the rules the profile's sources are fetched by. Nil
    /// when the profile has none, or outside a pipeline unless given.
    public let fetcher: (any Stage)?
    let blocking: BlockingExecutor
    /// Redacting costs a URL parse, so the pipeline's contexts do it only when asked.
    private let origin: Origin

    private enum Origin: Sendable {
        case redacted(String)
        case source(Source)
    }

    /// A context for running a stage outside a pipeline, as tests and tools do.
    public init(source: String, logger: Logger, blocking: BlockingExecutor = .shared, fetcher: (any Stage)? = nil) {
        origin = .redacted(source)
        self.logger = logger
        self.blocking = blocking
        self.fetcher = fetcher
    }

    init(source: Source, logger: Logger, blocking: BlockingExecutor, fetcher: (any Stage)? = nil) {
        origin = .source(source)
        self.logger = logger
        self.blocking = blocking
        self.fetcher = fetcher
    }

    /// Throws `PipelineError.cancelled` once nobody waits for this work any more.
    public func checkCancellation() throws {
        if Task.isCancelled { throw PipelineError.cancelled() }
    }

    /// Runs blocking C work (a decode, a transfer) off Swift's cooperative thread pool, so a
    /// slow call never starves other tasks.
    public func runBlocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try checkCancellation()
        return try await blocking.run(work)
    }
}
