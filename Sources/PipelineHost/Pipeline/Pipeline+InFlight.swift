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
            let task = StepWork(pipeline: self, chain: chain, step: step, work: WorkRef(key: key, id: work))
                .start(span: span)
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

    /// The value of an earlier step, as an input of `work`: joined at the work's priority, and
    /// linked to it meanwhile so a priority raise reaches it.
    func joinAsInput(_ chain: Chain, step: Int, for work: WorkRef) async -> StepOutcome {
        guard let priority = inFlight.priority(work) else { return .failure(.cancelled()) }
        defer { inFlight.inputArrived(work.key, work: work.id) }
        return await join(chain, step: step, priority: priority, asRequest: false, inputOf: work)
    }

    /// The priority of `work`; nil once it was cancelled or finished.
    func priority(of work: WorkRef) -> Priority? { inFlight.priority(work) }

    /// `work` leads the making of an entry other processes wait for (`InFlightTable.lead`).
    func lead(_ work: WorkRef, lease: any WorkLease) { inFlight.lead(work.key, work: work.id, lease: lease) }

    /// Whether every waiter here left `work`, which goes on for waiters elsewhere.
    func isOrphaned(_ work: WorkRef) -> Bool { inFlight.isOrphaned(work.key, work: work.id) }

    /// Answers every waiter and takes the work out of the table. Work that was cancelled is
    /// already out of it, and its waiters were answered when they left. A cache step whose store
    /// waits for its request stays joinable until that request ends (`release` in `outcome`):
    /// a request arriving in between would find it neither in flight nor stored.
    /// Returns how many waiters it answered.
    func finish(_ work: WorkRef, with outcome: StepOutcome) -> Int {
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
                    inFlight.abandon(key, work: id)?.task?.cancel()
                    activityMayHaveChanged()
                }
            }
        }
    }

    /// Work whose priority changed moves its lane ticket, if it waits for a slot, to match.
    private func moveTicket(of key: StageKey) {
        guard let ticket = inFlight.handle(key)?.ticket, let priority = inFlight.running[key]?.priority else { return }
        lanes[ticket.lane].reprioritize(id: ticket.id, to: priority)
    }
}
