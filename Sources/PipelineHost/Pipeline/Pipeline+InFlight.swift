import Tracing

/// Joining running work, starting it, and reference-counted cancellation: the actor's side of
/// `InFlightTable`, which decides; this file carries its decisions out (tasks, continuations,
/// lane tickets).
extension Pipeline {
    /// The value of step `step` of `chain`: joins running work with that key, or starts it.
    ///
    /// Cancelling the calling task answers this waiter at once with `cancelled`; the work goes
    /// on while anyone else waits for it, and is cancelled when the last waiter leaves.
    /// `inputOf`: the work that waits for this step as its input, linked so its priority
    /// changes reach this step.
    func join(
        _ chain: Chain, step: Int, priority: Priority, asRequest: Bool, memoryChecked: Bool = false,
        inputOf dependent: WorkRef? = nil
    ) async -> StepOutcome {
        // A memory hit answers at once: no work, no task, no disk.
        if !memoryChecked, let point = chain.caches[step], let hit = cache.memoryHit(chain.keys[step], at: point) {
            return .success(hit)
        }
        let key = chain.keys[step]
        let stage = chain.steps[step].name
        let id: Int, joined: Bool
        var joinSpan: (any Span)?
        switch inFlight.claim(key, priority: priority) {
        case .held:
            return inFlight.heldValue(key).map { .success($0.sharing()) } ?? .failure(.cancelled())
        case .join(let work, let raised):
            (id, joined) = (work, true)
            for key in raised { moveTicket(of: key) }
            // The wait for another request's work, linked to that work's span.
            joinSpan = PipelineTracing.start(SpanNames.join(stage), stage: stage)
            if let joinSpan, let shared = inFlight.handle(key)?.span {
                joinSpan.addLink(SpanLink(context: shared, attributes: [:]))
            }
        case .start(let work):
            (id, joined) = (work, false)
            counters.inFlightChanged(to: inFlight.count)
            // The work's span is a child of the request (or work) that starts it, and the
            // parent of everything the work does: its lookups, its input, its stage.
            let span = PipelineTracing.start(SpanNames.work(stage), stage: stage)
            let task = Task {
                await PipelineTracing.withActive(span) {
                    await self.perform(chain, step: step, work: WorkRef(key: key, id: work), span: span)
                }
            }
            inFlight.setHandle(key, work: work) { $0 = WorkHandle(task: task, span: span?.context) }
            activityMayHaveChanged()
        }
        let waiter = makeID()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Runs synchronously on the actor, in the same turn as the claim, so the work is
                // still there and the waiter is registered before any cancellation handler's
                // hop back to the actor can look for it.
                guard
                    inFlight.wait(
                        key, work: id, waiter: waiter, priority: priority, continuation,
                        inputOf: dependent.map { ($0.key, $0.id) })
                else {
                    continuation.resume(returning: .failure(.cancelled()))
                    return
                }
                if asRequest { waitingRequests += 1 }
            }
        } onCancel: {
            Task { await self.leave(key, work: id, waiter: waiter) }
        }
        if asRequest { waitingRequests -= 1 }
        PipelineTracing.end(joinSpan, failing: outcome.failure)
        return joined ? outcome.map { $0.sharing() } : outcome
    }

    /// The body of one piece of work: look in the cache when a cache stage follows this step,
    /// else (or on a miss) wait for the previous step and run this one.
    private func perform(_ chain: Chain, step: Int, work: WorkRef, span: (any Span)?) async {
        guard inFlight.priority(work) != nil else {
            span?.end()
            return
        }
        let outcome: StepOutcome
        if let point = chain.caches[step] {
            outcome = await throughCache(chain, step: step, work: work, point: point)
        } else {
            outcome = await compute(chain, step: step, work: work)
        }
        let answered = finish(work, with: outcome)
        span?.attributes[SpanNames.waiters] = answered
        PipelineTracing.end(span, failing: outcome.failure)
    }

    /// Waits for the previous step's value and runs this step on it. `validators` go to the
    /// first step with the source, for a conditional fetch.
    func compute(_ chain: Chain, step: Int, work: WorkRef, validators: Validators? = nil) async -> StepOutcome {
        let input: StepOutcome
        if step == 0 {
            input = .success(StepValue(source: chain.source, validators: validators))
        } else {
            input = await joinAsInput(chain, step: step - 1, for: work)
        }
        switch input {
        case .failure(let error): return .failure(error)
        case .success(let previous): return await runStep(chain, step: step, work: work, after: previous)
        }
    }

    /// The value of an earlier step, as an input of `work`: joined at the work's priority, and
    /// linked to it meanwhile so a priority raise reaches it.
    func joinAsInput(_ chain: Chain, step: Int, for work: WorkRef) async -> StepOutcome {
        guard let priority = inFlight.priority(work) else { return .failure(.cancelled()) }
        defer { inFlight.inputArrived(work.key, work: work.id) }
        return await join(chain, step: step, priority: priority, asRequest: false, inputOf: work)
    }

    /// Runs a step in its lane's slot. A body draws its room before its transfer takes a slot;
    /// an image opened from bytes draws its predicted peak after the step gave its slot back and
    /// before any later stage makes its pixels: work that holds a slot never waits for memory,
    /// so the work that would free memory can always run.
    private func runStep(_ chain: Chain, step: Int, work: WorkRef, after previous: StepValue) async -> StepOutcome {
        let configured = chain.steps[step]
        let role = configured.definition.role
        if role == .fetch, configuration.cache.mode == .offline {
            return .failure(PipelineError(.notCached, "not in the cache, and the pipeline is offline"))
        }
        var body: MemoryDraw?
        if role == .fetch, let memory {
            switch await memory.roomForBody(at: inFlight.priority(work), within: configuration.memoryWait) {
            case .success(let draw): body = draw
            case .failure(let error): return .failure(error)
            }
        }
        let lane = LaneKind(role), host = lane == .transfers ? chain.host : nil, queued = clock.now
        if let lane {
            guard await acquire(lane, host: host, for: work) else { return .failure(.cancelled()) }
        }
        let span = PipelineTracing.start(SpanNames.stage(configured.name), stage: configured.name)
        let context = StageContext(
            source: chain.source, logger: logger, blocking: blocking.pool(for: role), fetcher: chain.fetcher)
        let outcome = await PipelineTracing.withActive(span) {
            await StageRun.step(
                configured, after: previous, in: context, queuedAt: queued, counters: counters, wall: cache.wall)
        }
        PipelineTracing.end(span, failing: outcome.failure)
        if let lane { release(lane, host: host) }
        guard case .success(var value) = outcome else { return outcome }
        if let body, case .encoded(let encoded) = value.value {
            body.resize(to: encoded.bytes.count)
            value.memory.append(body)
        }
        if case .image(let image) = value.value, previous.value.kind != .image, let memory {
            let priority = inFlight.priority(work)
            switch await memory.roomForPixels(of: image, at: priority, within: configuration.memoryWait) {
            case .success(let draw?): value.memory.append(draw)
            case .success(nil): break
            case .failure(let error): return .failure(error)
            }
        }
        return .success(value)
    }

    /// Answers every waiter and takes the work out of the table. Work that was cancelled is
    /// already out of it, and its waiters were answered when they left. A cache step whose store
    /// waits for its request stays joinable until that request ends (`release` in `outcome`):
    /// a request arriving in between would find it neither in flight nor stored.
    /// Returns how many waiters it answered.
    private func finish(_ work: WorkRef, with outcome: StepOutcome) -> Int {
        let hold = try? outcome.get().awaitingCommit(of: work.key)
        guard let waiters = inFlight.finish(work.key, work: work.id, hold: hold) else { return 0 }
        for continuation in waiters { continuation.resume(returning: outcome) }
        activityMayHaveChanged()
        return waiters.count
    }

    /// A waiter's task was cancelled: answer it, and carry out what its leaving means for the
    /// work (`InFlightTable.Departure`). Nothing of cancelled work is kept.
    private func leave(_ key: StageKey, work id: Int, waiter: Int) {
        defer { activityMayHaveChanged() }
        switch inFlight.leave(key, work: id, waiter: waiter) {
        case .answered:
            break
        case .othersWait(let continuation, let lowered):
            continuation.resume(returning: .failure(.cancelled()))
            for key in lowered { moveTicket(of: key) }
        case .cancel(let continuation, let handle):
            continuation.resume(returning: .failure(.cancelled()))
            handle?.task?.cancel()
        case .orphaned(let continuation, let lease):
            continuation.resume(returning: .failure(.cancelled()))
            Task {
                if await lease.othersWait() {
                    logger.debug("the last request here left; the work goes on for another process")
                } else {
                    abandon(key, work: id)
                }
            }
        }
    }

    private func abandon(_ key: StageKey, work id: Int) {
        inFlight.abandon(key, work: id)?.task?.cancel()
        activityMayHaveChanged()
    }

    /// Work whose priority changed moves its lane ticket, if it waits for a slot, to match.
    private func moveTicket(of key: StageKey) {
        guard let ticket = inFlight.handle(key)?.ticket, let priority = inFlight.running[key]?.priority else { return }
        lanes[ticket.lane].reprioritize(id: ticket.id, to: priority)
    }
}
