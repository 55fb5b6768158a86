import PipelineHost

extension PipelineError.Kind {
    /// The result could not be written where the user asked (-o, --output-dir): the CLI's own.
    static let outputFailed = PipelineError.Kind("output_failed")
}

/// Writes each result of a batch to its file and prints its line, keeping the progress line
/// up to date.
struct ResultWriter: Sendable {
    /// How a run ended. A result that could not be written counts as failed.
    struct Summary: Sendable {
        var succeeded = 0
        var failed = 0
        var cancelled = 0
        var notStarted = 0
        var interrupted = false
        var elapsed: Duration = .zero
    }

    /// -o: the one output file.
    let file: String?
    let directory: String
    /// With --stats, standard output carries only the JSON.
    let linesToError: Bool
    /// --trace: a line of stage timings after each result line.
    let trace: Bool
    /// --json: a JSON object per result and per error on standard output instead of the lines.
    let json: Bool
    let progress: ProgressDisplay
    /// run --fallback: the fallback for a failed request, with the failed source's stable key
    /// for its output name; nil when its profile has none that covers the failure.
    var fallback: (@Sendable (ImageRequest, PipelineError) async -> (PipelineResult, key: String)?)?

    func run(_ batch: Batch) async -> Summary {
        var progress = progress
        var summary = Summary()
        var claims = OutputClaims()
        let redaction = batch.pipeline.profiles.redaction
        progress.update()
        let ending = await batch.run { request, outcome in
            switch outcome {
            case .success(let result):
                let path = file ?? OutputName.path(for: result, in: directory)
                do {
                    guard claims.claim(path, for: result.sourceKey) else {
                        throw AtomicFile.WriteError(
                            description: "another source's result already has this name in this run; not overwritten")
                    }
                    // File I/O blocks: it runs on the blocking pool, never on Swift's cooperative one.
                    try await BlockingExecutor.shared.run { try AtomicFile.write(result.bytes, to: path) }
                    summary.succeeded += 1
                    if json {
                        progress.print(ResultJSON.success(result, path: path), toError: false)
                    } else {
                        progress.print(ResultLine.success(result, path: path), toError: linesToError)
                    }
                    if trace { progress.print(ResultLine.trace(result), toError: true) }
                } catch {
                    summary.failed += 1
                    report(
                        PipelineError(.outputFailed, "cannot write \(path): \(error)"), source: result.source,
                        request: request, progress: progress)
                }
            case .failure(let error):
                if error.kind == .cancelled { summary.cancelled += 1 } else { summary.failed += 1 }
                let written = error.kind == .cancelled ? nil : await writeFallback(for: request, error)
                report(
                    error, source: error.source ?? redaction(request.source), request: request,
                    progress: progress,
                    fallback: written)
            }
            progress.update(succeeded: summary.succeeded, failed: summary.failed)
        }
        progress.finish()
        summary.notStarted = ending.notStarted
        summary.interrupted = ending.interrupted
        summary.elapsed = progress.elapsed
        return summary
    }

    /// An error's line: JSON on standard output, or the one-line message on standard error.
    /// Cancellations only get a JSON line; the summary counts them.
    private func report(
        _ error: PipelineError, source: String, request: ImageRequest, progress: ProgressDisplay,
        fallback: String? = nil
    ) {
        if json {
            progress.print(
                ResultJSON.failure(error, source: source, profile: request.profile, fallback: fallback), toError: false)
        } else if error.kind != .cancelled {
            progress.print(
                ResultLine.failure(source, error.reason + (fallback.map { "; fallback written to \($0)" } ?? "")),
                toError: true)
        }
    }

    /// Writes the profile's fallback where the failed source's result would have gone; the
    /// path, or nil when there is none or it cannot be written (the failure is reported anyway).
    private func writeFallback(for request: ImageRequest, _ error: PipelineError) async -> String? {
        guard let fallback, let (made, key) = await fallback(request, error) else { return nil }
        let path =
            file
            ?? OutputName.path(
                source: request.source, key: key, profile: request.profile, format: made.format, in: directory)
        do {
            try await BlockingExecutor.shared.run { try AtomicFile.write(made.bytes, to: path) }
            return path
        } catch {
            return nil
        }
    }
}
