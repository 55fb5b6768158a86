import Tracing

/// What the actor keeps with one piece of running work in its `InFlightTable`: the task, to
/// cancel it when the last waiter leaves, and its lane ticket while it waits for a slot, so a
/// change of priority reaches the queue.
struct WorkHandle {
    var task: Task<Void, Never>?
    var ticket: (lane: LaneKind, id: Int)?
    /// The work's span, when traced: a request that joins the work links its wait to it.
    var span: ServiceContext?
}

/// A piece of running work as its task refers to it: by key and id, never by reference, so the
/// task of cancelled work cannot touch newer work under the same key.
struct WorkRef: Sendable {
    let key: StageKey
    let id: Int
}

extension InFlightTable where Key == StageKey {
    /// The priority of `work`; nil once it was cancelled or finished.
    func priority(_ work: WorkRef) -> Priority? { priority(work.key, work: work.id) }
}
