/// Waiting for a transfer or CPU slot, in priority order, and giving it back.
extension Pipeline {
    /// Waits for a slot; false when the work was cancelled while it waited.
    func acquire(_ lane: LaneKind, host: String?, for work: WorkRef) async -> Bool {
        if lanes[lane].tryAcquire(host: host) { return true }
        // Work no longer in the table was cancelled: its task is on its way out.
        guard let priority = inFlight.priority(work) else { return false }
        let ticket = makeID()
        inFlight.setHandle(work.key, work: work.id) { $0?.ticket = (lane, ticket) }
        // Only a real wait has a span: a free slot costs nothing to trace.
        let span = PipelineTracing.start(SpanNames.queue(lane.name))
        defer {
            inFlight.setHandle(work.key, work: work.id) { $0?.ticket = nil }
            span?.end()
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { grant in
                lanes[lane].enqueue(id: ticket, priority: priority, host: host, grant: grant)
                counters.queueChanged(lane, to: lanes[lane].queue.count)
            }
        } onCancel: {
            Task { await self.drop(ticket, from: lane) }
        }
    }

    func release(_ lane: LaneKind, host: String?) {
        let granted = lanes[lane].release(host: host)
        guard !granted.isEmpty else { return }
        counters.queueChanged(lane, to: lanes[lane].queue.count)
        for ticket in granted { ticket.grant.resume(returning: true) }
    }

    /// Takes a cancelled work's ticket out of the queue, so queued CPU work is skipped.
    private func drop(_ ticket: Int, from lane: LaneKind) {
        guard let dropped = lanes[lane].remove(id: ticket) else { return }
        counters.queueChanged(lane, to: lanes[lane].queue.count)
        dropped.grant.resume(returning: false)
    }
}
