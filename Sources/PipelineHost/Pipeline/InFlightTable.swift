/// The in-flight table: the work running for each step key, who waits for it, at what
/// priority, and the finished values kept joinable until their request ends.
///
/// A plain value, like `Lane`. Its mutating functions make every decision (start or join,
/// whether a leaving waiter cancels the work, who a result goes to, which work a new waiter
/// raises) and return what the owner must carry out: resume these waiters, cancel that task,
/// raise those lane tickets. The `Pipeline` actor owns one and only does the carrying out, so
/// the rules are tested on their own, with no task, libvips or curl (`InFlightTableTests`).
struct InFlightTable<Key: Hashable, Waiter, Value, Handle> {
    /// One running piece of work: the value of one step key.
    struct Work {
        let id: Int
        var priority: Priority
        /// Who waits for the value, by waiter id: requests, or the work of the next step.
        var waiters: [Int: Waiter] = [:]
        /// The previous step's key while this work waits for it, so a raise reaches it.
        var parent: Key?
        /// What the owner keeps with the work (its task, its lane ticket).
        var handle: Handle?
        /// Processes elsewhere may wait for this work (it holds a shared lease): when the last
        /// waiter here leaves, it stays until the owner has asked whether anyone still waits.
        var othersMayWait = false
    }

    private(set) var running: [Key: Work] = [:]
    /// Finished values held for late joiners, until `release`.
    private(set) var held: [Key: Value] = [:]
    private var lastID = 0

    var count: Int { running.count }

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

    /// The second step: registers the waiter's continuation on the work it claimed. False when
    /// that work is gone (the owner answers the waiter itself).
    mutating func wait(_ key: Key, work id: Int, waiter: Int, _ continuation: Waiter) -> Bool {
        guard running[key]?.id == id else { return false }
        running[key]!.waiters[waiter] = continuation
        return true
    }

    /// What a waiter that left gets back, and whether its work is to be cancelled.
    struct Departure {
        /// The leaving waiter, to be answered `cancelled`; nil when it was already answered.
        var waiter: Waiter?
        /// The work's handle when nobody waits any more: cancel it. Nothing of it is kept.
        var cancel: Handle?
        var cancelsWork: Bool
        /// Nobody here waits any more, but others elsewhere may: the work stays, and the owner
        /// asks, then calls `abandon` if nobody does.
        var orphaned = false
    }

    /// A waiter's task was cancelled. The work goes on while anyone else waits, and is taken out
    /// of the table, to be cancelled, when the last waiter leaves.
    mutating func leave(_ key: Key, work id: Int, waiter: Int) -> Departure {
        guard running[key]?.id == id, let continuation = running[key]!.waiters.removeValue(forKey: waiter) else {
            return Departure(waiter: nil, cancel: nil, cancelsWork: false)
        }
        guard running[key]!.waiters.isEmpty else { return Departure(waiter: continuation, cancel: nil, cancelsWork: false) }
        if running[key]!.othersMayWait { return Departure(waiter: continuation, cancel: nil, cancelsWork: false, orphaned: true) }
        let work = running.removeValue(forKey: key)!
        return Departure(waiter: continuation, cancel: work.handle, cancelsWork: true)
    }

    /// Marks work `id` as one that processes elsewhere may wait for (see `Work.othersMayWait`).
    mutating func shareWithOthers(_ key: Key, work id: Int) {
        guard running[key]?.id == id else { return }
        running[key]!.othersMayWait = true
    }

    /// Orphaned work that nobody elsewhere waits for either: takes it out of the table and
    /// returns its handle, to be cancelled. Nil when a waiter came back meanwhile, or the work
    /// has finished.
    mutating func abandon(_ key: Key, work id: Int) -> Handle? {
        guard running[key]?.id == id, running[key]!.waiters.isEmpty else { return nil }
        return running.removeValue(forKey: key)!.handle
    }

    /// Whether work `id` runs with nobody here waiting for it (it goes on for others).
    func isOrphaned(_ key: Key, work id: Int) -> Bool {
        running[key]?.id == id && running[key]!.waiters.isEmpty
    }

    /// Work `id` finished: takes it out of the table and returns its waiters, to be answered
    /// with its outcome. Nil when the work was already cancelled (its waiters were answered as
    /// they left). With `hold`, the value stays joinable under the key until `release`.
    mutating func finish(_ key: Key, work id: Int, hold value: Value? = nil) -> [Waiter]? {
        guard running[key]?.id == id else { return nil }
        let work = running.removeValue(forKey: key)!
        if let value { held[key] = value }
        return Array(work.waiters.values)
    }

    /// Drops held values: their request has ended, and what it stored is in the cache now, or
    /// must not be reused.
    mutating func release(_ keys: some Sequence<Key>) {
        for key in keys { held[key] = nil }
    }

    /// Raises running work, and the work it waits for, to `priority`. Returns the keys raised.
    mutating func raise(_ key: Key, to priority: Priority) -> [Key] {
        var raised: [Key] = []
        var current: Key? = key
        while let key = current, let work = running[key], priority > work.priority {
            running[key]!.priority = priority
            raised.append(key)
            current = work.parent
        }
        return raised
    }

    func priority(_ key: Key, work id: Int) -> Priority? {
        running[key].flatMap { $0.id == id ? $0.priority : nil }
    }

    func handle(_ key: Key) -> Handle? { running[key]?.handle }

    /// Sets what the owner keeps with work `id` (its task, its lane ticket).
    mutating func setHandle(_ key: Key, work id: Int, _ update: (inout Handle?) -> Void) {
        guard running[key]?.id == id else { return }
        update(&running[key]!.handle)
    }

    /// Records which step work `id` waits for (nil: none now).
    mutating func setParent(_ key: Key, work id: Int, _ parent: Key?) {
        guard running[key]?.id == id else { return }
        running[key]!.parent = parent
    }
}
