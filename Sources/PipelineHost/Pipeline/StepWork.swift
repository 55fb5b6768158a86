import Tracing

/// One piece of work: step `step` of a chain, behind its cache point when it has one, run in its
/// lane. It runs off the actor and calls in only for what is the actor's (the in-flight table,
/// the lanes, the work's priority), so the `Pipeline` actor holds state and the glue around it.
struct StepWork: Sendable {
    let pipeline: Pipeline
    let chain: Chain
    let step: Int
    let work: WorkRef

    /// Runs the work in a task of its own, under `span`.
    func start(span: (any Span)?) -> Task<Void, Never> {
        Task { await PipelineTracing.withActive(span) { await perform(span: span) } }
    }

    /// Look in the cache when a cache stage follows this step, else (or on a miss) wait for the
    /// previous step and run this one; then answer every waiter.
    private func perform(span: (any Span)?) async {
        guard await pipeline.priority(of: work) != nil else {
            span?.end()
            return
        }
        let outcome: StepOutcome
        if let point = chain.caches[step] {
            outcome = await throughCache(point)
        } else {
            outcome = await compute()
        }
        let answered = await pipeline.finish(work, with: outcome)
        span?.attributes[SpanNames.waiters] = answered
        PipelineTracing.end(span, failing: outcome.failure)
    }

    /// The step behind its cache point: a stored entry if one answers, else the work (a
    /// conditional fetch when a stale original has validators), settled by the cache. A stale
    /// variant whose original turns out unchanged serves again without decoding anything.
    /// `TieredCache` decides what a lookup means; this runs the work behind it when it must.
    private func throughCache(_ point: CachePoint) async -> StepOutcome {
        let cache = pipeline.cache, key = chain.keys[step]
        let miss: TieredCache.Miss
        switch await cache.lookup(key, at: point) {
        case .hit(let value): return .success(value)
        case .miss(let found): miss = found
        }
        let settle = { [chain, step] (outcome: StepOutcome) in
            cache.settle(
                outcome, after: miss, key: key, at: point, step: chain.steps[step].name, source: chain.source.redacted)
        }
        if let variant = miss.reusable, let originalStep = chain.originalStep(before: step) {
            // The original first (revalidated through its own cache point). Its value stays
            // held for this request, so the full work below does not fetch it again.
            switch await pipeline.joinAsInput(chain, step: originalStep, for: work) {
            case .failure(let error):
                return settle(.failure(error))
            case .success(let original) where original.originVersion == variant.origin:
                return .success(cache.reuse(variant, after: original, key: key, at: point, miss: miss))
            case .success:
                break
            }
        }
        // Another process may be making the same entry: lead it, wait for it, or fail as it did.
        if let coordinator = cache.coordinator(for: point) {
            switch await coordinator.coordinate(key, at: point) {
            case .lead(let lease):
                // A variant others wait for outlives this process's requests (see `leave`). An
                // original does not: it is stored only once a request has decoded it.
                if point.layer == .variant { await pipeline.lead(work, lease: lease) }
                let outcome = settle(await compute(validators: miss.validators))
                if case .success(let value) = outcome, await pipeline.isOrphaned(work) {
                    // Nobody here waits any more; it went on for waiters elsewhere: store it.
                    cache.commit(value.pending)
                }
                // A failure is told to other processes only when it cannot depend on parts of
                // the source the key leaves out (credentials, dropped parameters, signers).
                lease.finished(outcome.map { _ in () }, shareable: !chain.source.keyHidesParts)
                return outcome
            case .lookAgain:
                if case .hit(let value) = await cache.lookup(key, at: point) { return .success(value) }
            case .failed(let error) where !chain.source.keyHidesParts:
                return settle(.failure(error))
            case .failed:
                // Another process failed on a source with this key, but this one carries parts
                // the key leaves out (credentials, say) that may well succeed: run it here.
                break
            case .alone:
                break
            }
        }
        return settle(await compute(validators: miss.validators))
    }

    /// Waits for the previous step's value and runs this step on it. `validators` go to the
    /// first step with the source, for a conditional fetch.
    private func compute(validators: Validators? = nil) async -> StepOutcome {
        let input: StepOutcome
        if step == 0 {
            input = .success(StepValue(source: chain.source, validators: validators))
        } else {
            input = await pipeline.joinAsInput(chain, step: step - 1, for: work)
        }
        switch input {
        case .failure(let error): return .failure(error)
        case .success(let previous): return await run(after: previous)
        }
    }

    /// Runs the step in its lane's slot. A body draws its room before its transfer takes a slot;
    /// an image opened from bytes draws its predicted peak after the step gave its slot back and
    /// before any later stage makes its pixels: work that holds a slot never waits for memory,
    /// so the work that would free memory can always run.
    private func run(after previous: StepValue) async -> StepOutcome {
        let configured = chain.steps[step], role = configured.definition.role
        let configuration = pipeline.configuration
        if role == .fetch, configuration.cache.mode == .offline {
            return .failure(PipelineError(.notCached, "not in the cache, and the pipeline is offline"))
        }
        var body: MemoryDraw?
        if role == .fetch, let memory = pipeline.memory {
            switch await memory.roomForBody(at: pipeline.priority(of: work), within: configuration.memoryWait) {
            case .success(let draw): body = draw
            case .failure(let error): return .failure(error)
            }
        }
        let lane = LaneKind(role), host = lane == .transfers ? chain.host : nil, queued = ContinuousClock.now
        if let lane {
            guard await pipeline.acquire(lane, host: host, for: work) else { return .failure(.cancelled()) }
        }
        let span = PipelineTracing.start(SpanNames.stage(configured.name), stage: configured.name)
        let context = StageContext(
            source: chain.source, logger: pipeline.logger, blocking: pipeline.blocking.pool(for: role),
            fetcher: chain.fetcher)
        let outcome = await PipelineTracing.withActive(span) {
            await StageRun.step(
                configured, after: previous, in: context, queuedAt: queued, counters: pipeline.counters,
                wall: pipeline.cache.wall)
        }
        PipelineTracing.end(span, failing: outcome.failure)
        if let lane { await pipeline.release(lane, host: host) }
        guard case .success(var value) = outcome else { return outcome }
        if let body, case .encoded(let encoded) = value.value {
            body.resize(to: encoded.bytes.count)
            value.memory.append(body)
        }
        if case .image(let image) = value.value, previous.value.kind != .image, let memory = pipeline.memory {
            let priority = await pipeline.priority(of: work)
            switch await memory.roomForPixels(of: image, at: priority, within: configuration.memoryWait) {
            case .success(let draw?): value.memory.append(draw)
            case .success(nil): break
            case .failure(let error): return .failure(error)
            }
        }
        return .success(value)
    }
}
