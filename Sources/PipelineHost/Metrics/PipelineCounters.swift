import CoreMetrics

/// The pipeline's bookkeeping: `PipelineStats` for `stats()` and `--stats`, mirrored live to
/// swift-metrics, so an app that bootstraps a backend (Prometheus, StatsD, OpenTelemetry) sees
/// the same figures. One place updates both, so they cannot drift apart.
///
/// Owned by the `Pipeline` actor. Metric objects are made once here: making one per event
/// would ask the backend's factory each time.
struct PipelineCounters {
    private(set) var stats = PipelineStats()
    private let factory: any MetricsFactory
    private let counters: [WritableKeyPath<PipelineStats, Int>: Counter]
    private let inFlight: Gauge
    private let requestTimer: Timer
    private var stageTimers: [String: Timer] = [:]

    init(factory: any MetricsFactory) {
        self.factory = factory
        var counters: [WritableKeyPath<PipelineStats, Int>: Counter] = [:]
        for (name, field) in PipelineStats.counters {
            counters[field] = Counter(label: "pipelinehost_\(name)_total", factory: factory)
        }
        self.counters = counters
        inFlight = Gauge(label: "pipelinehost_in_flight", factory: factory)
        requestTimer = Timer(label: "pipelinehost_request_duration", factory: factory)
    }

    mutating func add(_ field: WritableKeyPath<PipelineStats, Int>, _ amount: Int = 1) {
        stats[keyPath: field] += amount
        counters[field]?.increment(by: amount)
    }

    /// A stage ran: its time goes to `pipelinehost_stage_duration{stage=...}`, and decode-role
    /// time to the stats' decode time too.
    mutating func stageRan(_ name: String, role: StageRole, time: Duration) {
        if role == .decode { stats.decodeTime += time }
        let timer: Timer
        if let existing = stageTimers[name] {
            timer = existing
        } else {
            timer = Timer(label: "pipelinehost_stage_duration", dimensions: [("stage", name)], factory: factory)
            stageTimers[name] = timer
        }
        timer.recordNanoseconds(time.nanoseconds)
    }

    mutating func requestFinished(in time: Duration) {
        requestTimer.recordNanoseconds(time.nanoseconds)
    }

    mutating func inFlightChanged(to count: Int) {
        stats.inFlightPeak = max(stats.inFlightPeak, count)
        inFlight.record(count)
    }
}

extension Duration {
    /// Whole nanoseconds, for metrics backends.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
