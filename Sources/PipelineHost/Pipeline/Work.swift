/// The value of one stage prefix, as waiters receive it.
struct PrefixValue: Sendable {
    let value: StageValue
    /// Timings of every step so far.
    let timings: [PipelineResult.StageTiming]
    /// Whether some step on the way joined work started for another request.
    let shared: Bool
}

typealias PrefixOutcome = Result<PrefixValue, PipelineError>

/// One running piece of work in the in-flight table: the value of one stage prefix. Every
/// request whose prefix has the same key waits on it instead of starting its own.
///
/// Owned by the `Pipeline` actor and only touched there, so it needs no lock. Tasks and
/// cancellation handlers refer to it by key and `id`, never by reference.
final class Work {
    let id: Int
    let key: StageKey
    var priority: Priority
    /// Who waits for the value: requests, or the work of the next step.
    var waiters: [Int: CheckedContinuation<PrefixOutcome, Never>] = [:]
    /// Requests (not other work) among the waiters.
    var requestWaiters = 0
    var task: Task<Void, Never>?
    /// The previous step's key while this work waits for it, so a priority raise reaches it.
    var parent: StageKey?
    /// The lane ticket while this work waits for a slot.
    var ticket: (lane: LaneKind, id: Int)?

    init(id: Int, key: StageKey, priority: Priority) {
        self.id = id
        self.key = key
        self.priority = priority
    }
}
