/// A moment's view of a pipeline's queues, for progress displays and tests.
public struct PipelineActivity: Sendable, Equatable {
    /// Distinct pieces of work in the in-flight table (running or queued).
    public let work: Int
    /// Requests waiting for a result.
    public let waitingRequests: Int
    /// Transfers running now.
    public let runningTransfers: Int
    /// Transfers waiting for a slot.
    public let queuedTransfers: Int
    /// CPU stages running now.
    public let runningCPU: Int
    /// CPU stages waiting for a slot.
    public let queuedCPU: Int
    /// Bytes of requests and keys the memory-hit memo holds (bounded: see `KeyMemo`).
    public var keyMemoBytes: Int = 0

    /// Nothing running, queued or waiting.
    public var isIdle: Bool {
        work == 0 && waitingRequests == 0 && runningTransfers == 0 && queuedTransfers == 0 && runningCPU == 0
            && queuedCPU == 0
    }
}

extension PipelineActivity {
    /// The view of `lanes`' slots and queues, with the pipeline's own counts.
    init(work: Int, waitingRequests: Int, lanes: Lanes, keyMemoBytes: Int) {
        self.init(
            work: work, waitingRequests: waitingRequests,
            runningTransfers: lanes.transfers.running, queuedTransfers: lanes.transfers.queue.count,
            runningCPU: lanes.cpu.running, queuedCPU: lanes.cpu.queue.count, keyMemoBytes: keyMemoBytes)
    }
}
