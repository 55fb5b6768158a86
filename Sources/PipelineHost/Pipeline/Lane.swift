/// Slots for one kind of work (transfers, or CPU stages), handed out highest priority first
/// and first come, first served within a priority.
///
/// A plain value owned by the `Pipeline` actor: every method runs on the actor, so the queue
/// needs no lock. Waiting and cancelling live in `Pipeline+Lanes.swift`. Generic over what a
/// ticket carries to its waiter (the pipeline's is a continuation; LaneTests use numbers), so its
/// rules are tested on their own.
struct Lane<Grant> {
    struct Ticket {
        let id: Int
        var priority: Priority
        /// Arrival order, for first come, first served within a priority.
        let sequence: Int
        let host: String?
        let grant: Grant
    }

    let limit: Int
    /// At most this many slots go to one host; nil means no per-host limit.
    let perHostLimit: Int?
    private(set) var running = 0
    private var runningPerHost: [String: Int] = [:]
    private(set) var queue: [Ticket] = []
    private var sequence = 0

    init(limit: Int, perHostLimit: Int? = nil) {
        self.limit = limit
        self.perHostLimit = perHostLimit
    }

    /// Takes a slot now if one is free. Anything still queued is blocked by its host's limit
    /// (`release` hands free slots out at once), so taking a free slot never jumps the queue.
    mutating func tryAcquire(host: String?) -> Bool {
        guard running < limit, hostHasRoom(host) else { return false }
        take(host)
        return true
    }

    mutating func enqueue(id: Int, priority: Priority, host: String?, grant: Grant) {
        sequence += 1
        queue.append(Ticket(id: id, priority: priority, sequence: sequence, host: host, grant: grant))
    }

    /// Gives back a slot and returns the tickets that now get one; the caller resumes them.
    mutating func release(host: String?) -> [Ticket] {
        running -= 1
        if let host {
            runningPerHost[host, default: 1] -= 1
            if runningPerHost[host] == 0 { runningPerHost[host] = nil }
        }
        var granted: [Ticket] = []
        while running < limit, let index = bestEligible() {
            let ticket = queue.remove(at: index)
            take(ticket.host)
            granted.append(ticket)
        }
        return granted
    }

    /// Removes a queued ticket (its work was cancelled) and returns it, or nil if it already
    /// has a slot.
    mutating func remove(id: Int) -> Ticket? {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
        return queue.remove(at: index)
    }

    /// Moves a queued ticket to `priority`, up or down (its work's waiters changed). It keeps
    /// its arrival order among tickets of that priority.
    mutating func reprioritize(id: Int, to priority: Priority) {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return }
        queue[index].priority = priority
    }

    private mutating func take(_ host: String?) {
        running += 1
        if let host { runningPerHost[host, default: 0] += 1 }
    }

    private func hostHasRoom(_ host: String?) -> Bool {
        guard let host, let perHostLimit else { return true }
        return runningPerHost[host, default: 0] < perHostLimit
    }

    private func bestEligible() -> Int? {
        var best: Int?
        for index in queue.indices where hostHasRoom(queue[index].host) {
            guard let current = best else { best = index; continue }
            let a = queue[index], b = queue[current]
            if a.priority > b.priority || (a.priority == b.priority && a.sequence < b.sequence) { best = index }
        }
        return best
    }
}

/// What a queued step waits on: resumed with true when it gets a slot, false when its work
/// was cancelled first.
typealias SlotGrant = CheckedContinuation<Bool, Never>

/// The queues a step can wait in.
enum LaneKind: String, Sendable {
    case transfers
    case cpu

    /// "transfers" or "cpu", as spans name the lane.
    var name: String { rawValue }

    init?(_ role: StageRole) {
        switch role {
        case .fetch: self = .transfers
        case .decode, .process, .encode: self = .cpu
        case .key, .cache: return nil
        }
    }
}

/// The pipeline's two queues, by kind.
struct Lanes {
    var transfers: Lane<SlotGrant>
    var cpu: Lane<SlotGrant>

    subscript(kind: LaneKind) -> Lane<SlotGrant> {
        get { kind == .transfers ? transfers : cpu }
        set { if kind == .transfers { transfers = newValue } else { cpu = newValue } }
    }
}
