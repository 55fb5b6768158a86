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
    let blocking: (transfers: BlockingExecutor, pixels: BlockingExecutor, io: BlockingExecutor)
    let clock = ContinuousClock()

    /// Running work by step key, and finished cache steps held until their request ends.
    var inFlight = InFlightTable<StageKey, CheckedContinuation<StepOutcome, Never>, StepValue, WorkHandle>()
    var transferLane: Lane<SlotGrant>
    var cpuLane: Lane<SlotGrant>
    let counters: PipelineCounters
    /// Memory, disk and any additional tiers, and what a lookup behind a cache point means.
    let cache: TieredCache
    /// What the key stages made of recent requests, for the memory-hit path.
    var keyMemo = KeyMemo()
    /// Requests waiting for their final step right now.
    var waitingRequests = 0 { didSet { activityMayHaveChanged() } }
    /// Callers of `waitForActivity` whose condition does not hold yet.
    var activityWaiters: [Int: (condition: @Sendable (PipelineActivity) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var lastID = 0

    /// A pipeline for the profiles of one file. It starts no work until a request comes.
    /// Blocking work runs on the process's pools, one per kind (`BlockingExecutor.transfers`,
    /// `.pixels`, `.shared`), unless `blocking` names one pool for all of it.
    public init(profiles: ProfileSet, configuration: PipelineConfiguration = PipelineConfiguration(),
                logger: Logger = Logger(label: "pipelinehost"), blocking: BlockingExecutor? = nil) {
        self.profiles = profiles
        self.configuration = configuration
        self.logger = logger
        self.blocking = blocking.map { ($0, $0, $0) } ?? (.transfers, .pixels, .shared)
        transferLane = Lane(limit: configuration.transfers, perHostLimit: configuration.transfersPerHost)
        cpuLane = Lane(limit: configuration.cpuStages)
        counters = PipelineCounters(factory: configuration.metrics ?? MetricsSystem.factory)
        cache = TieredCache(settings: configuration.cache, blocking: self.blocking.io, counters: counters, logger: logger)
    }

    /// Runs one request. Cancelling the calling task cancels this request only; shared work
    /// goes on for the other requests waiting for it.
    ///
    /// `joinable` is called once the request's work is registered, before it can finish: a
    /// request for the same image made after that call shares it (a batch starts twins so).
    public func image(for request: ImageRequest, priority: Priority = .normal,
                      joinable: (@Sendable () -> Void)? = nil) async throws(PipelineError) -> PipelineResult {
        counters.add(\.requests)
        let started = clock.now
        let remembered = keyMemo[request]
        let outcome: Result<PipelineResult, PipelineError>
        if let remembered, let hit = cache.memoryHit(remembered.key, at: remembered.point) {
            joinable?()
            outcome = .success(result(request, origin: remembered.origin, key: remembered.key, keyTimings: [], hit))
        } else {
            outcome = await self.outcome(of: request, priority: priority, memoryChecked: remembered != nil, joinable: joinable)
        }
        counters.requestFinished(in: clock.now - started)
        switch outcome {
        case .success(let result):
            counters.add(\.succeeded)
            if result.coalesced { counters.add(\.coalesced) }
            if result.stale { counters.add(\.staleResults) }
            if result.isOversized { counters.add(\.oversizedSources) }
            return result
        case .failure(let error):
            counters.add(error.kind == .cancelled ? \.cancelled : \.failed)
            throw error
        }
    }

    /// The stable key of a request's source: what its key stages (normalize) make of it. Requests
    /// with equal source keys share their download when they run at the same time.
    public func sourceKey(for request: ImageRequest) async throws(PipelineError) -> String {
        let plan = try RequestPlan(request, in: profiles)
        return try await runKeyStages(request, plan).get().source.key
    }

    /// What the pipeline has done so far.
    public func stats() -> PipelineStats {
        var stats = counters.stats
        stats.inFlight = inFlight.count
        return stats
    }

    /// What is running and queued right now.
    public func activity() -> PipelineActivity {
        PipelineActivity(work: inFlight.count, waitingRequests: waitingRequests,
                         runningTransfers: transferLane.running, queuedTransfers: transferLane.queue.count,
                         runningCPU: cpuLane.running, queuedCPU: cpuLane.queue.count, keyMemoBytes: keyMemo.bytes)
    }

    func makeID() -> Int {
        lastID += 1
        return lastID
    }

    /// The full path: plan, key stages, chain, then the final step. `memoryChecked`: the memo
    /// path already asked memory for the final step.
    private func outcome(of request: ImageRequest, priority: Priority, memoryChecked: Bool,
                         joinable: (@Sendable () -> Void)?) async -> Result<PipelineResult, PipelineError> {
        // Every way out before the work is registered says so too, so nobody waits forever.
        var announced = false
        defer { if !announced { joinable?() } }
        let plan: RequestPlan
        do {
            plan = try RequestPlan(request, in: profiles)
        } catch {
            return .failure(error.from(Redactor.redact(request.source)))
        }
        let source: Source, keyTimings: [PipelineResult.StageTiming]
        switch await runKeyStages(request, plan) {
        case .success(let keyed): (source, keyTimings) = keyed
        case .failure(let error): return .failure(error.from(Redactor.redact(request.source)))
        }
        let chain = Chain(source: source, plan: plan, settings: configuration.cache, profileFile: profiles.file)
        guard !chain.steps.isEmpty else {
            return .failure(PipelineError(.profile, "profile \"\(request.profile)\" has no stage after its key stages", source: source.redacted))
        }
        keyMemo.remember(request, chain: chain)
        // The claim in `join` happens in this turn of the actor, before its first suspension, so
        // a request let in by this call finds the work running.
        announced = true
        joinable?()
        let joined = await join(chain, step: chain.steps.count - 1, priority: priority, asRequest: true, memoryChecked: memoryChecked)
        // Committed, or dropped with the request: either way the values this request held for
        // later arrivals are now on their way to the cache, or must not be reused.
        defer {
            inFlight.release(chain.keys)
            activityMayHaveChanged()
        }
        switch joined {
        case .failure(let error):
            return .failure(error.from(source.redacted))
        case .success(let prefix):
            guard case .encoded = prefix.value else {
                // The loader's chain check makes this unreachable for loaded profiles.
                return .failure(PipelineError(.profile, "profile \"\(request.profile)\" did not end in encoded bytes", source: source.redacted))
            }
            cache.commit(prefix.pending)
            return .success(result(request, origin: source, key: chain.keys.last!, keyTimings: keyTimings, prefix))
        }
    }

    /// A request's result from its final step's value, which holds encoded bytes.
    private func result(_ request: ImageRequest, origin: Source, key: StageKey, keyTimings: [PipelineResult.StageTiming],
                        _ value: StepValue) -> PipelineResult {
        guard case .encoded(let encoded) = value.value else { preconditionFailure("a final step gives encoded bytes") }
        return PipelineResult(
            request: request, origin: origin, stageKey: key,
            bytes: encoded.bytes, format: encoded.format, size: encoded.size, sourceSize: encoded.sourceSize,
            timings: keyTimings + value.timings, coalesced: value.coalesced,
            memoryHit: value.memoryHit, diskHit: value.diskHit, sharedHit: value.sharedHit, stale: value.stale,
            expiresAt: value.expiresAt, noStore: value.noStore)
    }

    /// Runs the key stages, which only rewrite the source; they are cheap and run inline.
    private func runKeyStages(_ request: ImageRequest, _ plan: RequestPlan) async
        -> Result<(source: Source, timings: [PipelineResult.StageTiming]), PipelineError> {
        var source = Source(location: request.source)
        // One reading of a source for every reader: what the key would be made from must be
        // what the transfer connects to, so a source either reads alike everywhere or runs nothing.
        if let ambiguity = SourceLocation(request.source).ambiguity {
            return .failure(PipelineError(.invalidSource, "ambiguous source: \(ambiguity)").from(source.redacted))
        }
        var timings: [PipelineResult.StageTiming] = []
        for configured in plan.keyStages {
            let started = clock.now
            let outcome: Result<StageValue, PipelineError>
            if let rewriter = configured.rewriter {
                outcome = Self.rewrite(source, with: rewriter, name: configured.name)
            } else {
                outcome = await Self.run(configured, on: .source(source),
                                         in: StageContext(source: source, logger: logger, blocking: blocking.io))
            }
            switch outcome {
            case .success(.source(let updated)): source = updated
            case .success: return .failure(PipelineError(.stageFailed, "\(configured.name): a key stage must give a source"))
            case .failure(let error): return .failure(error.from(source.redacted))
            }
            timings.append(.init(stage: configured.name, duration: clock.now - started))
        }
        return .success((source, timings))
    }

    /// A synchronous key stage, in place, with its errors made PipelineErrors.
    private static func rewrite(_ source: Source, with rewriter: any SourceRewriter, name: String) -> Result<StageValue, PipelineError> {
        do {
            return .success(.source(try rewriter.rewrite(source)))
        } catch {
            return .failure(PipelineError(thrown: error, by: name))
        }
    }

    /// Runs one stage off the actor, turning whatever it throws into a PipelineError.
    static func run(_ configured: ConfiguredStage, on input: StageValue, in context: StageContext) async
        -> Result<StageValue, PipelineError> {
        do {
            try context.checkCancellation()
            return .success(try await configured.stage.run(input, in: context))
        } catch {
            return .failure(PipelineError(thrown: error, by: configured.name))
        }
    }
}
