import CoreMetrics
import Logging

/// Runs requests through the profiles of one profile file.
///
/// Every step of a profile after its key stages has a key: the normalized source plus the
/// identity of each stage so far. A request whose step key matches running work joins it
/// instead of starting its own, so twin requests share everything and two profiles on one
/// source share the download (and the decode, when its parameters match). Work stops when the
/// last request waiting for it is cancelled. Transfers and CPU stages wait for slots in queues
/// that serve higher priorities first.
public actor Pipeline {
    /// The profiles this pipeline runs.
    public nonisolated let profiles: ProfileSet
    /// Slot counts, cache settings and metrics.
    public nonisolated let configuration: PipelineConfiguration
    let logger: Logger
    /// Blocking work by kind: transfers, pixel work and file I/O each on threads of their own.
    let blocking: BlockingPools

    /// Running work by step key, and finished cache steps held until their request ends.
    var inFlight = InFlightTable<
        StageKey, CheckedContinuation<StepOutcome, Never>, StepValue, WorkHandle, any WorkLease
    >()
    /// Slots for transfers and for CPU stages; every change answers `activityWaiters`.
    var lanes: Lanes { didSet { activityMayHaveChanged() } }
    let counters: PipelineCounters
    /// What transfers' bodies and decodes may hold at once; nil when the configuration sets none.
    nonisolated let memory: MemoryBudget?
    /// Memory, disk and any additional tiers, and what a lookup behind a cache point means.
    let cache: TieredCache
    /// What the key stages made of recent requests, for the memory-hit path.
    var keyMemo = KeyMemo()
    /// Requests waiting for their final step right now.
    var waitingRequests = 0 {
        didSet {
            counters.waitingChanged(to: waitingRequests)
            activityMayHaveChanged()
        }
    }
    /// Callers of `waitForActivity` whose condition does not hold yet.
    var activityWaiters = ActivityWaiters()
    private var lastID = 0

    /// A pipeline for the profiles of one file. It starts no work until a request comes.
    /// Blocking work runs on the process's pools, one per kind (`BlockingExecutor.transfers`,
    /// `.pixels`, `.shared`), unless `blocking` names one pool for all of it.
    public init(
        profiles: ProfileSet, configuration: PipelineConfiguration = PipelineConfiguration(),
        logger: Logger = Logger(label: "pipelinehost"), blocking: BlockingExecutor? = nil
    ) {
        self.profiles = profiles
        self.configuration = configuration
        self.logger = logger
        self.blocking = BlockingPools(blocking)
        lanes = Lanes(
            transfers: Lane(limit: configuration.transfers, perHostLimit: configuration.transfersPerHost),
            cpu: Lane(limit: configuration.cpuStages))
        counters = PipelineCounters(factory: configuration.metrics ?? MetricsSystem.factory)
        memory = MemoryBudget.forPipeline(configuration.memoryBudget, counters: counters, blocking: self.blocking.io)
        cache = TieredCache(
            settings: configuration.cache, blocking: self.blocking.io, counters: counters, logger: logger)
        listenForAnnouncedPurges()
    }

    /// Runs one request. Cancelling the calling task cancels this request only; shared work
    /// goes on for the other requests waiting for it.
    ///
    /// `joinable` is called once the request's work is registered, before it can finish: a
    /// request for the same image made after that call shares it (a batch starts twins so).
    public func image(
        for request: ImageRequest, priority: Priority = .normal,
        joinable: (@Sendable () -> Void)? = nil
    ) async throws(PipelineError) -> PipelineResult {
        try await PipelineTracing.request(request, source: profiles.redaction(request.source)) {
            await answer(request, priority: priority, joinable: joinable)
        }.get()
    }

    /// `image(for:)` without its span: the memory-hit path, or the full one, counted.
    private func answer(
        _ request: ImageRequest, priority: Priority, joinable: (@Sendable () -> Void)?
    ) async -> Result<PipelineResult, PipelineError> {
        counters.add(\.requests)
        let started = ContinuousClock.now
        let remembered = keyMemo[request]
        let outcome: Result<PipelineResult, PipelineError>
        if let remembered, let hit = cache.memoryHit(remembered.key, at: remembered.point) {
            joinable?()
            outcome = PipelineResult.finished(request, origin: remembered.origin, key: remembered.key, hit)
        } else {
            outcome = await self.outcome(
                of: request, priority: priority, memoryChecked: remembered != nil, joinable: joinable)
        }
        counters.requestEnded(outcome, in: .now - started)
        return outcome
    }

    /// Waits until every cache store started so far has finished. The CLI calls it before it
    /// exits, so the next run finds what this one stored.
    public func flushCache() async { await cache.drain() }

    /// What the pipeline has done so far.
    public func stats() -> PipelineStats { counters.stats(inFlight: inFlight.count) }

    /// The memory budget's figures now; nil without a budget.
    public nonisolated var memoryUsage: MemoryUsage? { memory?.usage }

    /// What is running and queued right now.
    public func activity() -> PipelineActivity {
        PipelineActivity(
            work: inFlight.count, waitingRequests: waitingRequests, lanes: lanes, keyMemoBytes: keyMemo.bytes)
    }

    func makeID() -> Int {
        lastID += 1
        return lastID
    }

    /// The full path: plan, key stages, chain, then the final step. `memoryChecked`: the memo
    /// path already asked memory for the final step.
    private func outcome(
        of request: ImageRequest, priority: Priority, memoryChecked: Bool,
        joinable: (@Sendable () -> Void)?
    ) async -> Result<PipelineResult, PipelineError> {
        // Every way out before the work is registered says so too, so nobody waits forever.
        var announced = false
        defer { if !announced { joinable?() } }
        let chain: Chain, keyTimings: [PipelineResult.StageTiming]
        switch await StageRun.chain(
            for: request, in: profiles, settings: configuration.cache, logger: logger, blocking: blocking.io)
        {
        case .success(let planned): (chain, keyTimings) = planned
        case .failure(let error): return .failure(error)
        }
        let source = chain.source
        keyMemo.remember(request, chain: chain)
        // The claim in `join` happens in this turn of the actor, before its first suspension, so
        // a request let in by this call finds the work running.
        announced = true
        joinable?()
        let joined = await join(
            chain, step: chain.steps.count - 1, priority: priority, asRequest: true, memoryChecked: memoryChecked)
        // Committed, or dropped with the request: either way the values this request held for
        // later arrivals are now on their way to the cache, or must not be reused.
        defer {
            inFlight.release(chain.keys)
            activityMayHaveChanged()
        }
        switch joined {
        case .failure(let error):
            return .failure(error.from(source.redacted))
        case .success(let value):
            let result = PipelineResult.finished(
                request, origin: source, key: chain.keys.last!, keyTimings: keyTimings, value)
            if case .success = result { cache.commit(value.pending) }
            return result
        }
    }
}
