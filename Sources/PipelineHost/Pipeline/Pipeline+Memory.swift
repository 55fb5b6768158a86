/// Drawing from the memory budget (`MemoryBudget`) on a work's behalf: at its priority, within
/// the configuration's wait, and failing as the request should when it cannot.
extension Pipeline {
    /// Room for a body about to be fetched; nil without a budget.
    func drawForBody(of work: WorkRef) async -> Result<MemoryDraw?, PipelineError> {
        guard let memory else { return .success(nil) }
        guard let priority = inFlight.priority(work.key, work: work.id) else { return .failure(.cancelled()) }
        return await waited(memory.drawForBody(priority: priority, limit: configuration.memoryWait), in: memory)
    }

    /// An opened image's predicted peak; nil without a budget or a prediction. Work that could
    /// never fit is refused at once, naming both figures.
    func drawForPixels(of image: any PipelineImage, work: WorkRef) async -> Result<MemoryDraw?, PipelineError> {
        let bytes = image.predictedPeakBytes
        guard let memory, bytes > 0 else { return .success(nil) }
        guard memory.admits(bytes) else {
            return .failure(
                PipelineError(
                    .pixelLimit,
                    "decoding this \(image.sourceSize) image takes about \(ByteText.bytes(bytes)), more than the "
                        + "memory budget (\(ByteText.bytes(memory.capacity)))"))
        }
        guard let priority = inFlight.priority(work.key, work: work.id) else { return .failure(.cancelled()) }
        let span = PipelineTracing.start(SpanNames.queue("memory"))
        defer { span?.end() }
        return await waited(
            memory.drawForWork(bytes, priority: priority, limit: configuration.memoryWait), in: memory)
    }

    private func waited(_ result: Result<MemoryDraw, MemoryWaitEnd>, in memory: MemoryBudget)
        -> Result<MemoryDraw?, PipelineError>
    {
        switch result {
        case .success(let draw): return .success(draw)
        case .failure(.cancelled): return .failure(.cancelled())
        case .failure(.timedOut):
            let wait = configuration.memoryWait.map { " within \($0)" } ?? ""
            return .failure(
                PipelineError(
                    .overloaded,
                    "the memory budget (\(ByteText.bytes(memory.capacity))) had no room for this image\(wait)"))
        }
    }
}
