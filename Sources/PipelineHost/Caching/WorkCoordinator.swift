/// A tier that can also share the work behind a miss between processes: before the work runs
/// here, the pipeline asks it whether to lead (compute, then store), to look again (another
/// process stored the entry meanwhile), or to fail as another process just did. Redis' shared
/// tier does it with leases, so nodes behind one load balancer fetch and decode an image once.
public protocol WorkCoordinator: CacheTier {
    /// Called on a miss at `point`, before the work runs. May wait (bounded) for another
    /// process that leads the same work.
    func coordinate(_ key: StageKey, at point: CachePoint) async -> Coordination
}

/// What to do about a miss that another process may be working on.
public enum Coordination: Sendable {
    /// Run the work here; tell the lease how it ended.
    case lead(any WorkLease)
    /// Another process finished: look in the tiers again.
    case lookAgain
    /// Another process failed just now (a negative entry): fail the same way.
    case failed(PipelineError)
    /// No coordination (the store is unreachable, or the wait ran out): run the work here.
    case alone
}

/// The right to run one piece of work for every process, held until `finished`.
public protocol WorkLease: Sendable {
    /// The work ended. A success is released once its entry is stored (the pipeline stores it
    /// when a request using it succeeds); a failure is released at once, with a negative entry
    /// when the failure is one that would only repeat and `shareable` (it cannot depend on what
    /// the key leaves out of the source: see `Source.keyHidesParts`).
    func finished(_ outcome: Result<Void, PipelineError>, shareable: Bool)

    /// Whether a process elsewhere waits for this work now. Asked when the last request here
    /// leaves: work others wait for goes on, is stored for them, and released as usual.
    func othersWait() async -> Bool
}

extension WorkLease {
    /// A lease that cannot tell says nobody waits: the work stops with its last request here.
    public func othersWait() async -> Bool { false }
}
