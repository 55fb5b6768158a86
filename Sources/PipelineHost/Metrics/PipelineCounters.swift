import CoreMetrics

/// The pipeline's bookkeeping: `PipelineStats` for `stats()` and `--stats`, mirrored live to
/// swift-metrics, so an app that bootstraps a backend (Prometheus, StatsD, OpenTelemetry) sees
/// the same figures. One place updates both, so they cannot drift apart.
///
/// Shared by the `Pipeline` actor, its cache tiers and the disk writer, which count from pool
/// threads; the figures sit behind one lock. Metric objects are made once here: making one per
/// event would ask the backend's factory each time.
final class PipelineCounters: Sendable {
    private struct State {
        var stats = PipelineStats()
        var stageTimers: [String: Timer] = [:]
        /// The memory budget's largest totals seen (waits, refusals, timeouts), for its counters.
        var memoryTotals = (0, 0, 0)
        /// Key paths are not Sendable, so the map from field to metric sits behind the lock too.
        let counters: [WritableKeyPath<PipelineStats, Int>: Counter]
    }

    private let state: Locked<State>
    private let factory: any MetricsFactory
    private let inFlight: Gauge
    private let waiting: Gauge
    /// `pipelinehost_queued{lane=transfers|cpu}`: steps waiting for a slot now.
    private let queued: (transfers: Gauge, cpu: Gauge)
    private let requestTimer: Timer
    /// The memory budget: `pipelinehost_memory_budget_bytes`, `_drawn_bytes`, `_waiting`, and
    /// the totals of draws that waited, work refused as too large, and waits past their limit.
    private let memory:
        (budget: Gauge, drawn: Gauge, waiting: Gauge, waits: Counter, refusals: Counter, timeouts: Counter)

    init(factory: any MetricsFactory) {
        self.factory = factory
        var counters: [WritableKeyPath<PipelineStats, Int>: Counter] = [:]
        for (name, field) in PipelineStats.counters {
            counters[field] = Counter(label: "pipelinehost_\(name)_total", factory: factory)
        }
        state = Locked(State(counters: counters))
        inFlight = Gauge(label: "pipelinehost_in_flight", factory: factory)
        waiting = Gauge(label: "pipelinehost_waiting_requests", factory: factory)
        queued = (
            Gauge(label: "pipelinehost_queued", dimensions: [("lane", LaneKind.transfers.name)], factory: factory),
            Gauge(label: "pipelinehost_queued", dimensions: [("lane", LaneKind.cpu.name)], factory: factory)
        )
        requestTimer = Timer(label: "pipelinehost_request_duration", factory: factory)
        memory = (
            Gauge(label: "pipelinehost_memory_budget_bytes", factory: factory),
            Gauge(label: "pipelinehost_memory_drawn_bytes", factory: factory),
            Gauge(label: "pipelinehost_memory_waiting", factory: factory),
            Counter(label: "pipelinehost_memory_waits_total", factory: factory),
            Counter(label: "pipelinehost_memory_refusals_total", factory: factory),
            Counter(label: "pipelinehost_memory_wait_timeouts_total", factory: factory)
        )
    }

    /// The figures so far.
    var stats: PipelineStats { state.withLock { $0.stats } }

    /// The figures so far, with the count of work running now.
    func stats(inFlight: Int) -> PipelineStats {
        var stats = stats
        stats.inFlight = inFlight
        for (counter, value) in ProcessCounters.snapshot() { stats.processCounters[counter.name] = value }
        return stats
    }

    func add(_ field: WritableKeyPath<PipelineStats, Int>, _ amount: Int = 1) {
        let counter = state.withLock { state in
            state.stats[keyPath: field] += amount
            return state.counters[field]
        }
        counter?.increment(by: amount)
    }

    /// A request ended, after `time`: what it ended in.
    func requestEnded(_ outcome: Result<PipelineResult, PipelineError>, in time: Duration) {
        requestFinished(in: time)
        switch outcome {
        case .success(let result):
            add(\.succeeded)
            if result.coalesced { add(\.coalesced) }
            if result.stale { add(\.staleResults) }
            if result.isOversized { add(\.oversizedSources) }
        case .failure(let error):
            add(error.kind == .cancelled ? \.cancelled : \.failed)
        }
    }

    /// A stage ran and gave `output`: fetches count their bytes, a decode from bytes counts as
    /// one, and the time goes to the stage's timer.
    func stageRan(_ name: String, role: StageRole, input: StageValue, output: StageValue, time: Duration) {
        recordTime(of: name, role: role, time: time)
        switch role {
        case .fetch:
            add(\.fetchesSucceeded)
            if case .encoded(let encoded) = output { add(\.bytesFetched, encoded.bytes.count) }
        case .decode:
            if input.kind == .encoded { add(\.decodes) }
        case .key, .process, .encode, .cache:
            break
        }
    }

    /// A stage's time goes to `pipelinehost_stage_duration{stage=...}`, and decode-role time to
    /// the stats' decode time too.
    private func recordTime(of name: String, role: StageRole, time: Duration) {
        let factory = factory
        let timer = state.withLock { state in
            if role == .decode { state.stats.decodeTime += time }
            if let existing = state.stageTimers[name] { return existing }
            let made = Timer(label: "pipelinehost_stage_duration", dimensions: [("stage", name)], factory: factory)
            state.stageTimers[name] = made
            return made
        }
        timer.recordNanoseconds(time.nanoseconds)
    }

    func requestFinished(in time: Duration) {
        requestTimer.recordNanoseconds(time.nanoseconds)
    }

    func inFlightChanged(to count: Int) {
        state.withLock { $0.stats.inFlightPeak = max($0.stats.inFlightPeak, count) }
        inFlight.record(count)
    }

    /// Requests waiting for their final step now: twins that joined running work count too.
    func waitingChanged(to count: Int) { waiting.record(count) }

    /// The memory budget changed: gauges take the new figures, counters what was added since.
    func memoryChanged(_ usage: MemoryUsage) {
        // Snapshots may arrive out of order: the counters only ever move up to the largest seen.
        let added = state.withLock { state in
            let seen = state.memoryTotals
            state.memoryTotals = (max(seen.0, usage.waits), max(seen.1, usage.refusals), max(seen.2, usage.timeouts))
            return (
                state.memoryTotals.0 - seen.0, state.memoryTotals.1 - seen.1, state.memoryTotals.2 - seen.2
            )
        }
        memory.budget.record(usage.capacity)
        memory.drawn.record(usage.drawn)
        memory.waiting.record(usage.waiting)
        if added.0 > 0 { memory.waits.increment(by: added.0) }
        if added.1 > 0 { memory.refusals.increment(by: added.1) }
        if added.2 > 0 { memory.timeouts.increment(by: added.2) }
    }

    /// Steps waiting for a slot of `lane` now: recorded when its queue changes, not per slot.
    func queueChanged(_ lane: LaneKind, to count: Int) {
        (lane == .transfers ? queued.transfers : queued.cpu).record(count)
    }
}

extension Duration {
    /// Whole nanoseconds, for metrics backends.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
