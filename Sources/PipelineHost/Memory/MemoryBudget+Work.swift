/// The pipeline's draws, failing as a request should: cancelled when the work is gone (no
/// priority), refused at once when it could never fit, overloaded when no room came in time.
extension MemoryBudget {
    /// A pipeline's budget of `bytes`, if it has one: its figures go to the metrics, and
    /// `MemoryTrim` watches them to hand freed memory back to the system.
    static func forPipeline(_ bytes: Int?, counters: PipelineCounters, blocking: BlockingExecutor) -> MemoryBudget? {
        let trim = MemoryTrim(blocking: blocking)
        return bytes.map { bytes in
            MemoryBudget(capacity: bytes) { usage in
                counters.memoryChanged(usage)
                trim.observe(usage)
            }
        }
    }

    /// Room for a body about to be fetched, at the work's priority.
    func roomForBody(at priority: Priority?, within wait: Duration?) async -> Result<MemoryDraw?, PipelineError> {
        guard let priority else { return .failure(.cancelled()) }
        return waited(await drawForBody(priority: priority, limit: wait), within: wait)
    }

    /// An opened image's predicted peak; nil without a prediction. Work that could never fit is
    /// refused at once, naming both figures.
    func roomForPixels(of image: any PipelineImage, at priority: Priority?, within wait: Duration?) async
        -> Result<MemoryDraw?, PipelineError>
    {
        let bytes = image.predictedPeakBytes
        guard bytes > 0 else { return .success(nil) }
        guard admits(bytes) else {
            return .failure(
                PipelineError(
                    .pixelLimit,
                    "decoding this \(image.sourceSize) image takes about \(ByteText.bytes(bytes)), more than the "
                        + "memory budget (\(ByteText.bytes(capacity)))"))
        }
        guard let priority else { return .failure(.cancelled()) }
        let span = PipelineTracing.start(SpanNames.queue("memory"))
        defer { span?.end() }
        return waited(await drawForWork(bytes, priority: priority, limit: wait), within: wait)
    }

    private func waited(_ result: Result<MemoryDraw, MemoryWaitEnd>, within wait: Duration?)
        -> Result<MemoryDraw?, PipelineError>
    {
        switch result {
        case .success(let draw): return .success(draw)
        case .failure(.cancelled): return .failure(.cancelled())
        case .failure(.timedOut):
            return .failure(
                PipelineError(
                    .overloaded,
                    "the memory budget (\(ByteText.bytes(capacity))) had no room for this image"
                        + (wait.map { " within \($0)" } ?? "")))
        }
    }
}
