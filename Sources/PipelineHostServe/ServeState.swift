import Logging
import PipelineHost
import Prometheus

/// What every request handler shares: the pipeline slot, the admission gate, the settings, the
/// metrics registry, and whether the service is draining.
final class ServeState: Sendable {
    let settings: ServeSettings
    let slot: PipelineSlot
    let gate: AdmissionGate
    /// Open connections, and the spare ones kept for the operational endpoints.
    let connections: ConnectionSlots
    let registry: PrometheusCollectorRegistry
    let accessLog: Logger
    /// Every request's `--request-timeout`.
    let deadlines = RequestDeadlines()
    private let draining = Locked(false)
    /// Plugins' process counters as /metrics last exported them, by name.
    let exportedProcessCounts = Locked([String: Int]())
    /// Prefetch batches running now; more than a few are refused like a full queue.
    let prefetches = AdmissionGate(limit: 4, full: "prefetch batches are running")
    /// Purges running now: each reads every disk entry's header, so a few at once at most.
    let purges = AdmissionGate(limit: 2, full: "purges are running")

    init(settings: ServeSettings, slot: PipelineSlot, registry: PrometheusCollectorRegistry, accessLog: Logger) {
        self.settings = settings
        self.slot = slot
        gate = AdmissionGate(limit: settings.maxQueue, full: "requests are waiting (--max-queue)")
        connections = ConnectionSlots(limit: settings.maxConnections)
        self.registry = registry
        self.accessLog = accessLog
    }

    /// Waits for `work` within `--request-timeout`: past it, the work is cancelled like a
    /// client that hung up (its transfer and pixel work stop unless another request shares them).
    func withinDeadline<T: Sendable>(_ work: Task<T, Never>) async -> (value: T, timedOut: Bool) {
        let timedOut = Locked(false)
        let deadline = deadlines.start(settings.requestTimeout) {
            timedOut.withLock { $0 = true }
            work.cancel()
        }
        let value = await withTaskCancellationHandler {
            await work.value
        } onCancel: {
            work.cancel()
        }
        deadlines.finish(deadline)
        return (value, timedOut.withLock { $0 })
    }

    var isDraining: Bool { draining.withLock { $0 } }
    func startDraining() { draining.withLock { $0 = true } }
}
