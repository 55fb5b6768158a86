import Logging

/// Runs requests through the profiles of one profile file.
///
/// Today each request runs its stages in order. In-flight deduplication, priorities and shared
/// cancellation are the runner issue's work and will live here, keyed by `StageKey`.
public actor Pipeline {
    public let profiles: ProfileSet
    private let logger: Logger
    private let blocking: BlockingExecutor

    public init(profiles: ProfileSet, logger: Logger = Logger(label: "pipelinehost"),
                blocking: BlockingExecutor = .shared) {
        self.profiles = profiles
        self.logger = logger
        self.blocking = blocking
    }

    public func image(for request: ImageRequest) async throws(PipelineError) -> PipelineResult {
        guard let profile = profiles[request.profile] else {
            throw PipelineError(.profile, "no profile named \"\(request.profile)\" in \(profiles.file)",
                                source: Redactor.redact(request.source))
        }
        var value = StageValue.source(Source(location: request.source))
        var source = Source(location: request.source)
        var key = StageKey(source: source.key)
        var timings: [PipelineResult.StageTiming] = []
        let clock = ContinuousClock()
        for configured in profile.stages {
            let context = StageContext(source: source.redacted, logger: logger, blocking: blocking)
            let started = clock.now
            do {
                try context.checkCancellation()
                value = try await configured.stage.run(value, in: context)
            } catch let error as PipelineError {
                throw error.from(source.redacted)
            } catch is CancellationError {
                throw PipelineError.cancelled().from(source.redacted)
            } catch {
                throw PipelineError(.stageFailed, "\(configured.name): \(error)", source: source.redacted)
            }
            timings.append(.init(stage: configured.name, duration: clock.now - started))
            if case .source(let updated) = value {
                source = updated
                key = StageKey(source: updated.key)
            } else {
                key.append(configured.identity)
            }
        }
        guard case .encoded(let encoded) = value else {
            // The loader's chain check makes this unreachable for loaded profiles.
            throw PipelineError(.profile, "profile \"\(profile.name)\" did not end in encoded bytes", source: source.redacted)
        }
        return PipelineResult(
            request: request, source: source.redacted, sourceKey: source.key, key: key.description, bytes: encoded.bytes,
            format: encoded.format,
            size: encoded.size,
            sourceSize: encoded.sourceSize, timings: timings)
    }
}

extension PipelineError {
    /// The same error, naming the source if it did not already.
    func from(_ source: String) -> PipelineError {
        var copy = self
        if copy.source == nil { copy.source = source }
        return copy
    }
}
