import PipelineHost

/// Writes each result of a batch to its file and prints its line, keeping the progress line
/// up to date.
struct ResultWriter: Sendable {
    /// -o: the one output file.
    let file: String?
    let directory: String
    /// With --stats, standard output carries only the JSON.
    let linesToError: Bool
    let progress: ProgressDisplay

    func run(_ batch: Batch) async -> (Batch.Summary, written: Int, elapsed: Duration) {
        var progress = progress
        var written = 0
        progress.update()
        var summary = await batch.run { request, outcome in
            switch outcome {
            case .success(let result):
                let path = file ?? OutputName.path(for: result, in: directory)
                do {
                    try AtomicFile.write(result.bytes, to: path)
                    written += 1
                    progress.record(succeeded: true)
                    progress.print(ResultLine.success(result, path: path), toError: linesToError)
                } catch {
                    progress.record(succeeded: false)
                    progress.print(ResultLine.failure(result.source, "cannot write \(path): \(error)"), toError: true)
                }
            case .failure(let error) where error.kind == .cancelled:
                progress.recordCancelled()
            case .failure(let error):
                progress.record(succeeded: false)
                progress.print(ResultLine.failure(error.source ?? Redactor.redact(request.source), error.reason), toError: true)
            }
            progress.update()
        }
        progress.finish()
        // A result that could not be written is a failure of the run, not of the pipeline.
        summary.failed += summary.succeeded - written
        summary.succeeded = written
        return (summary, written, progress.elapsed)
    }
}
