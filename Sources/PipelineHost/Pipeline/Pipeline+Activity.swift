/// Waiting for a state of the queues: the event a test or a progress display waits on, instead
/// of polling `activity()` against a clock. Every change of what `activity()` reports calls
/// `activityMayHaveChanged`, which costs nothing while nobody waits.
extension Pipeline {
    /// Returns once `condition` holds for the pipeline's activity (at once if it holds now), or
    /// when the calling task is cancelled.
    public func waitForActivity(where condition: @escaping @Sendable (PipelineActivity) -> Bool) async {
        if condition(activity()) { return }
        let id = makeID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { activityWaiters.add(id, condition, $0) }
        } onCancel: {
            Task { await self.dropActivityWaiter(id) }
        }
    }

    func activityMayHaveChanged() {
        if !activityWaiters.isEmpty { activityWaiters.answer(activity()) }
    }

    private func dropActivityWaiter(_ id: Int) { activityWaiters.drop(id) }
}
