/// Joining running work, starting it, and reference-counted cancellation: the actor's side of
/// `InFlightTable`, which decides; this file carries its decisions out (tasks, continuations,
/// lane tickets).
extension Pipeline {
    /// The value of step `step` of `chain`: joins running work with that key, or starts it.
    ///
    /// Cancelling the calling task answers this waiter at once with `cancelled`; the work goes
    /// on while anyone else waits for it, and is cancelled when the last waiter leaves.
    func join(_ chain: Chain, step: Int, priority: Priority, asRequest: Bool, memoryChecked: Bool = false) async -> StepOutcome {
        // A memory hit answers at once: no work, no task, no disk.
        if !memoryChecked, let hit = memoryHit(chain, step: step) { return .success(hit) }
        let key = chain.keys[step]
        let id: Int, joined: Bool
        switch inFlight.claim(key, priority: priority) {
        case .held:
            guard var held = inFlight.heldValue(key) else { return .failure(.cancelled()) }
            held.coalesced = true
            return .success(held)
        case .join(let work, let raised):
            (id, joined) = (work, true)
            for key in raised { raiseTicket(of: key, to: priority) }
        case .start(let work):
            (id, joined) = (work, false)
            counters.inFlightChanged(to: inFlight.count)
            let task = Task { await self.perform(chain, step: step, work: WorkRef(key: key, id: work)) }
            inFlight.setHandle(key, work: work) { $0 = WorkHandle(task: task) }
            activityMayHaveChanged()
        }
        let waiter = makeID()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Runs synchronously on the actor, in the same turn as the claim, so the work is
                // still there and the waiter is registered before any cancellation handler's
                // hop back to the actor can look for it.
                guard inFlight.wait(key, work: id, waiter: waiter, continuation) else {
                    continuation.resume(returning: .failure(.cancelled()))
                    return
                }
                if asRequest { waitingRequests += 1 }
            }
        } onCancel: {
            Task { await self.leave(key, work: id, waiter: waiter) }
        }
        if asRequest { waitingRequests -= 1 }
        guard joined, case .success(var value) = outcome else { return outcome }
        value.coalesced = true
        return .success(value)
    }

    /// The body of one piece of work: look in the cache when a cache stage follows this step,
    /// else (or on a miss) wait for the previous step and run this one.
    private func perform(_ chain: Chain, step: Int, work: WorkRef) async {
        guard inFlight.priority(work.key, work: work.id) != nil else { return }
        let outcome: StepOutcome
        if let point = chain.caches[step] {
            outcome = await throughCache(chain, step: step, work: work, point: point)
        } else {
            outcome = await compute(chain, step: step, work: work)
        }
        finish(work, with: outcome)
    }

    /// Waits for the previous step's value and runs this step on it. `validators` go to the
    /// first step with the source, for a conditional fetch.
    func compute(_ chain: Chain, step: Int, work: WorkRef, validators: Validators? = nil) async -> StepOutcome {
        let input: StepOutcome
        if step == 0 {
            var source = chain.source
            source.validators = validators
            input = .success(StepValue(value: .source(source), timings: [], coalesced: false))
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
        guard let priority = inFlight.priority(work.key, work: work.id) else { return .failure(.cancelled()) }
        inFlight.setParent(work.key, work: work.id, chain.keys[step])
        defer { inFlight.setParent(work.key, work: work.id, nil) }
        return await join(chain, step: step, priority: priority, asRequest: false)
    }

    private func runStep(_ chain: Chain, step: Int, work: WorkRef, after previous: StepValue) async -> StepOutcome {
        let configured = chain.steps[step]
        let role = configured.definition.role
        let lane = LaneKind(role)
        let host = lane == .transfers ? chain.host : nil
        if role == .fetch, configuration.cache.mode == .offline {
            return .failure(PipelineError(.notCached, "not in the cache, and the pipeline is offline"))
        }
        let queued = clock.now
        if let lane {
            guard await acquire(lane, host: host, for: work) else { return .failure(.cancelled()) }
        }
        defer { if let lane { release(lane, host: host) } }
        let started = clock.now
        if role == .fetch { counters.add(\.fetches) }
        let pool = role == .fetch ? blocking.transfers : lane == nil ? blocking.io : blocking.pixels
        let context = StageContext(source: chain.source, logger: logger, blocking: pool, fetcher: chain.fetcher)
        let result = await Self.run(configured, on: previous.value, in: context)
        let ran = clock.now - started
        switch result {
        case .failure(let error):
            return .failure(error)
        case .success(let value):
            counters.stageRan(configured.name, role: role, input: previous.value, output: value, time: ran)
            let timing = PipelineResult.StageTiming(stage: configured.name, waited: started - queued, duration: ran)
            return .success(previous.carrying(value, timings: previous.timings + [timing], now: cache.wall.now))
        }
    }

    /// Answers every waiter and takes the work out of the table. Work that was cancelled is
    /// already out of it, and its waiters were answered when they left. A cache step whose store
    /// waits for its request stays joinable until that request ends (`release` in `outcome`):
    /// a request arriving in between would find it neither in flight nor stored.
    private func finish(_ work: WorkRef, with outcome: StepOutcome) {
        var hold: StepValue?
        if case .success(let value) = outcome, value.pending.contains(where: { $0.key == work.key && !$0.isCommitted }) {
            hold = value
        }
        guard let waiters = inFlight.finish(work.key, work: work.id, hold: hold) else { return }
        for continuation in waiters { continuation.resume(returning: outcome) }
        activityMayHaveChanged()
    }

    /// A waiter's task was cancelled: answer it, and cancel the work if nobody else waits.
    /// Nothing of cancelled work is kept, so a later request starts afresh.
    private func leave(_ key: StageKey, work id: Int, waiter: Int) {
        let departure = inFlight.leave(key, work: id, waiter: waiter)
        defer { activityMayHaveChanged() }
        departure.waiter?.resume(returning: .failure(.cancelled()))
        if departure.cancelsWork { departure.cancel?.task?.cancel() }
        if departure.orphaned {
            // The work holds a shared lease: go on if another process waits for it, else cancel.
            let lease = inFlight.handle(key)?.lease
            Task {
                let othersWait = await lease?.othersWait() ?? false
                self.orphanAsked(key, work: id, othersWait: othersWait)
            }
        }
    }

    private func orphanAsked(_ key: StageKey, work id: Int, othersWait: Bool) {
        if othersWait {
            logger.debug("the last request here left; the work goes on for another process")
        } else {
            inFlight.abandon(key, work: id)?.task?.cancel()
            activityMayHaveChanged()
        }
    }

    /// A raised work's lane ticket moves up its queue too.
    private func raiseTicket(of key: StageKey, to priority: Priority) {
        if let ticket = inFlight.handle(key)?.ticket { withLane(ticket.lane) { $0.raise(id: ticket.id, to: priority) } }
    }
}

/// What the actor keeps with one piece of running work in its `InFlightTable`: the task, to
/// cancel it when the last waiter leaves, its shared lease if it leads one, and its lane ticket while it waits for a slot, so a
/// priority raise reaches the queue.
struct WorkHandle {
    var task: Task<Void, Never>?
    var ticket: (lane: LaneKind, id: Int)?
    /// The shared lease the work leads, asked whether other processes wait when it is orphaned.
    var lease: (any WorkLease)?
}

/// A piece of running work as its task refers to it: by key and id, never by reference, so the
/// task of cancelled work cannot touch newer work under the same key.
struct WorkRef: Sendable {
    let key: StageKey
    let id: Int
}
