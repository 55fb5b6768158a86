import Logging

/// What a stage may use while it runs, and nothing that could break the pipeline's guarantees.
public struct StageContext: Sendable {
    /// The request's source, redacted: safe to log.
    public let source: String
    public let logger: Logger
    let blocking: BlockingExecutor

    public init(source: String, logger: Logger, blocking: BlockingExecutor = .shared) {
        self.source = source
        self.logger = logger
        self.blocking = blocking
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
