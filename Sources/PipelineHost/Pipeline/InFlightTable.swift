/// The in-flight table: the work running for each step key, who waits for it, at what
/// priority, the shared leases it leads, and the finished values kept joinable until their
/// request ends. Work a purge detached runs on for its waiters, out of reach of new claims.
///
/// A plain value, like `Lane`. Its mutating functions make every decision (start or join,
/// what a leaving waiter means for the work, who a result goes to, which work a waiter raises
/// or lowers) and return what the owner must carry out: resume these waiters, cancel that task,
/// ask that lease, move those lane tickets. The `Pipeline` actor owns one and only does the
/// carrying out, so the rules are tested on their own, with no task, libvips or curl
/// (`InFlightTableTests`).
struct InFlightTable<Key: Hashable, Waiter, Value, Handle, Lease> {
    /// One waiter of a piece of work, at the priority it asked for.
    struct Waiting {
        var continuation: Waiter
        var priority: Priority
    }

    /// Where work waits as an input: the key and id of the work it waits for, and its waiter id
    /// there, so a change of its priority reaches that waiter's entry.
    struct InputLink: Equatable {
        let key: Key
        let work: Int
        let waiter: Int
    }

    /// One running piece of work: the value of one step key.
    struct Work {
        let id: Int
        /// The highest priority of its waiters (the claim's, until the first one registers).
        var priority: Priority
        /// Who waits for the value, by waiter id: requests, or the work of the next step.
        var waiters: [Int: Waiting] = [:]
        /// The previous step's work while this work waits for it as an input.
        var input: InputLink?
        /// What the owner keeps with the work (its task, its lane ticket).
        var handle: Handle?
        /// The shared lease this work leads: processes elsewhere may wait for it, so when the
        /// last waiter here leaves, it stays until the owner has asked the lease.
        var lease: Lease?
    }

    /// The work new claims join, by key.
    private(set) var running: [Key: Work] = [:]
    /// Work a purge took out of `running`, by id: it finishes for the waiters it has, and no
    /// claim finds it (`detach`).
    private(set) var detached: [Int: (key: Key, work: Work)] = [:]
    /// Finished values held for late joiners, until `release`.
    private(set) var held: [Key: Value] = [:]
    private var lastID = 0

    var count: Int { running.count + detached.count }

    enum Claim: Equatable {
        /// Nothing ran for the key: the owner starts work `id`.
        case start(work: Int)
        /// Work `id` runs already; the keys whose priority the new waiter raised (this work and
        /// the steps it waits for) need their lane tickets raised too.
        case join(work: Int, raised: [Key])
        /// A finished value is held for the key.
        case held
    }

    /// The first step of waiting for `key`: join running work, take a held value, or start.
    mutating func claim(_ key: Key, priority: Priority) -> Claim {
        if held[key] != nil { return .held }
        if let existing = running[key] {
            return .join(work: existing.id, raised: raise(key, to: priority))
        }
        lastID += 1
        running[key] = Work(id: lastID, priority: priority)
        return .start(work: lastID)
    }

    /// The value `claim` found held.
    func heldValue(_ key: Key) -> Value? { held[key] }

    /// The second step: registers the waiter on the work it claimed, at the priority it claimed
    /// with. `inputOf` is the work that waits (for an earlier step's value), linked so that its
    /// priority changes reach this entry. False when that work is gone (the owner answers the
    /// waiter itself).
    mutating func wait(
        _ key: Key, work id: Int, waiter: Int, priority: Priority, _ continuation: Waiter,
        inputOf dependent: (key: Key, work: Int)? = nil
    ) -> Bool {
        guard update(key, id, { $0.waiters[waiter] = Waiting(continuation: continuation, priority: priority) }) != nil
        else { return false }
        if let dependent {
            update(dependent.key, dependent.work) { $0.input = InputLink(key: key, work: id, waiter: waiter) }
        }
        return true
    }

    /// What a waiter's leaving means.
    enum Departure {
        /// The waiter was answered already (its work finished or was cancelled): nothing to do.
        case answered
        /// Others here still wait: answer the waiter `cancelled`; the work goes on at their
        /// priority, and `lowered` are the keys whose priority fell (their lane tickets move).
        case othersWait(Waiter, lowered: [Key])
        /// Nobody waits any more: answer the waiter, and cancel the work's handle. The work is
        /// out of the table, and nothing of it is kept.
        case cancel(Waiter, Handle?)
        /// Nobody here waits, but the work leads a shared lease: answer the waiter, ask the lease
        /// whether a process elsewhere waits, and call `abandon` if none does.
        case orphaned(Waiter, Lease)
    }

    /// A waiter's task was cancelled. The work goes on while anyone else waits, at the highest
    /// priority left (as Nuke does), and is taken out of the table when the last waiter leaves.
    mutating func leave(_ key: Key, work id: Int, waiter: Int) -> Departure {
        guard let left = update(key, id, { $0.waiters.removeValue(forKey: waiter) }) ?? nil else {
            return .answered
        }
        let work = self.work(key, id)!
        if !work.waiters.isEmpty {
            return .othersWait(left.continuation, lowered: settlePriority(key, id))
        }
        // Detached work is for nobody else: a purge made its result worthless to other nodes too.
        if let lease = work.lease, running[key]?.id == id { return .orphaned(left.continuation, lease) }
        return .cancel(left.continuation, remove(key, id)!.handle)
    }

    /// Work `id` leads a shared lease that processes elsewhere may wait on: its last waiter
    /// here leaving orphans it instead of cancelling it (see `Departure.orphaned`).
    mutating func lead(_ key: Key, work id: Int, lease: Lease) {
        update(key, id) { $0.lease = lease }
    }

    /// Orphaned work that nobody elsewhere waits for either: takes it out of the table and
    /// returns its handle, to be cancelled. Nil when a waiter came back meanwhile, or the work
    /// has finished.
    mutating func abandon(_ key: Key, work id: Int) -> Handle? {
        guard work(key, id)?.waiters.isEmpty == true else { return nil }
        return remove(key, id)!.handle
    }

    /// Whether work `id` runs with nobody here waiting for it (it goes on for others).
    func isOrphaned(_ key: Key, work id: Int) -> Bool {
        work(key, id)?.waiters.isEmpty == true
    }

    /// Work `id` finished: takes it out of the table and returns its waiters, to be answered
    /// with its outcome. Nil when the work was already cancelled (its waiters were answered as
    /// they left). With `hold`, the value stays joinable under the key until `release`, unless
    /// a purge detached the work.
    mutating func finish(_ key: Key, work id: Int, hold value: Value? = nil) -> [Waiter]? {
        let wasJoinable = running[key]?.id == id
        guard let work = remove(key, id) else { return nil }
        if let value, wasJoinable { held[key] = value }
        return work.waiters.values.map(\.continuation)
    }

    /// Drops held values: their request has ended, and what it stored is in the cache now, or
    /// must not be reused.
    mutating func release(_ keys: some Sequence<Key>) {
        for key in keys { held[key] = nil }
    }

    /// Raises running work, and the work it waits for, to `priority`. Returns the keys raised.
    mutating func raise(_ key: Key, to priority: Priority) -> [Key] {
        guard let id = running[key]?.id else { return [] }
        return reprioritize(from: key, id) { priority > $0.priority ? priority : nil }
    }

    /// Sets work's priority to the highest of its waiters' after one left, and carries a fall
    /// to the work it waits for. Returns the keys lowered.
    private mutating func settlePriority(_ key: Key, _ id: Int) -> [Key] {
        reprioritize(from: key, id) { work in
            work.waiters.values.map(\.priority).max().flatMap { $0 < work.priority ? $0 : nil }
        }
    }

    /// Walks from work `id` along the input links while `change` gives a work a new priority:
    /// sets it, and the work's entry among its input's waiters, so the input's own priority
    /// follows. Returns the keys changed of joinable work (detached work keeps its lane place).
    private mutating func reprioritize(from key: Key, _ id: Int, _ change: (Work) -> Priority?) -> [Key] {
        var changed: [Key] = []
        var current: (key: Key, id: Int)? = (key, id)
        while let (key, id) = current, let work = work(key, id), let priority = change(work) {
            update(key, id) { $0.priority = priority }
            if running[key]?.id == id { changed.append(key) }
            current = nil
            if let link = work.input, self.work(link.key, link.work)?.waiters[link.waiter] != nil {
                update(link.key, link.work) { $0.waiters[link.waiter]!.priority = priority }
                current = (link.key, link.work)
            }
        }
        return changed
    }

    func priority(_ key: Key, work id: Int) -> Priority? { work(key, id)?.priority }

    /// The handle of the joinable work under `key`.
    func handle(_ key: Key) -> Handle? { running[key]?.handle }

    /// Sets what the owner keeps with work `id` (its task, its lane ticket).
    mutating func setHandle(_ key: Key, work id: Int, _ change: (inout Handle?) -> Void) {
        update(key, id) { change(&$0.handle) }
    }

    /// Work `id` has its input's value (or gave up on it): it waits for no step now.
    mutating func inputArrived(_ key: Key, work id: Int) {
        update(key, id) { $0.input = nil }
    }

    /// A purge: the running work whose key `matches` goes on for the waiters it has, but no
    /// claim joins it from now on (they start anew), and held values of such keys are dropped.
    /// What it makes is stored nowhere (the purge ledger drops its writes). Returns how many
    /// pieces of work were detached.
    @discardableResult
    mutating func detach(where matches: (Key) -> Bool) -> Int {
        for key in held.keys where matches(key) { held[key] = nil }
        let doomed = running.filter { matches($0.key) }
        for (key, work) in doomed {
            running[key] = nil
            detached[work.id] = (key, work)
        }
        return doomed.count
    }

    /// Work `id` under `key`, joinable or detached.
    private func work(_ key: Key, _ id: Int) -> Work? {
        if let work = running[key], work.id == id { return work }
        if let entry = detached[id], entry.key == key { return entry.work }
        return nil
    }

    /// Changes work `id` where it is; nil when it is gone.
    @discardableResult
    private mutating func update<Result>(_ key: Key, _ id: Int, _ change: (inout Work) -> Result) -> Result? {
        if running[key]?.id == id { return change(&running[key]!) }
        if detached[id]?.key == key { return change(&detached[id]!.work) }
        return nil
    }

    /// Takes work `id` out of the table.
    private mutating func remove(_ key: Key, _ id: Int) -> Work? {
        if running[key]?.id == id { return running.removeValue(forKey: key) }
        if detached[id]?.key == key { return detached.removeValue(forKey: id)?.work }
        return nil
    }
}

extension InFlightTable.Departure: Equatable where Waiter: Equatable, Handle: Equatable, Lease: Equatable {}
