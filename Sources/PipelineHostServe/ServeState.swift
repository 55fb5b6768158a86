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
    /// Prefetch batches running now; more than a few are refused like a full queue.
    let prefetches = Locked(0)
    static let prefetchBatches = 4
    /// Purges running now: each reads every disk entry's header, so a few at once at most.
    let purges = Locked(0)
    static let concurrentPurges = 2

    init(settings: ServeSettings, slot: PipelineSlot, registry: PrometheusCollectorRegistry, accessLog: Logger) {
        self.settings = settings
        self.slot = slot
        gate = AdmissionGate(limit: settings.maxQueue)
        connections = ConnectionSlots(limit: settings.maxConnections)
        self.registry = registry
        self.accessLog = accessLog
    }

    /// Counts one more of a bounded kind of work (`running` of at most `limit`), or throws the
    /// 503 with `Retry-After: 1` that a full queue gets; the caller takes it off when done.
    static func admit(_ running: Locked<Int>, limit: Int, _ what: String) throws(ServeFailure) {
        let admitted = running.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            var busy = ServeFailure(
                .serviceUnavailable, "queue_full", "\(limit) \(what) are running; try again shortly")
            busy.retryAfter = 1
            throw busy
        }
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
