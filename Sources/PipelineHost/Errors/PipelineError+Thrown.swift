extension PipelineError {
    /// What a stage threw, as a PipelineError: its own errors pass through, a cancellation is
    /// `cancelled`, and anything else is `stage_failed` naming the stage.
    init(thrown error: any Error, by stage: String) {
        switch error {
        case let error as PipelineError: self = error
        case is CancellationError: self = .cancelled()
        default: self.init(.stageFailed, "\(stage): \(error)")
        }
    }

    /// The same error, naming the source if it did not already.
    func from(_ source: String) -> PipelineError {
        var copy = self
        if copy.source == nil { copy.source = source }
        return copy
    }
}
