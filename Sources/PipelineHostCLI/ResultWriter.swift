import PipelineHost

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
    let progress: ProgressDisplay

    func run(_ batch: Batch) async -> Summary {
        var progress = progress
        var summary = Summary()
        progress.update()
        let ending = await batch.run { request, outcome in
            switch outcome {
            case .success(let result):
                let path = file ?? OutputName.path(for: result, in: directory)
                do {
                    try AtomicFile.write(result.bytes, to: path)
                    summary.succeeded += 1
                    progress.print(ResultLine.success(result, path: path), toError: linesToError)
                    if trace { progress.print(ResultLine.trace(result), toError: true) }
                } catch {
                    summary.failed += 1
                    progress.print(ResultLine.failure(result.source, "cannot write \(path): \(error)"), toError: true)
                }
            case .failure(let error) where error.kind == .cancelled:
                summary.cancelled += 1
            case .failure(let error):
                summary.failed += 1
                progress.print(ResultLine.failure(error.source ?? Redactor.redact(request.source), error.reason), toError: true)
            }
            progress.update(succeeded: summary.succeeded, failed: summary.failed)
        }
        progress.finish()
        summary.notStarted = ending.notStarted
        summary.interrupted = ending.interrupted
        summary.elapsed = progress.elapsed
        return summary
    }
}
