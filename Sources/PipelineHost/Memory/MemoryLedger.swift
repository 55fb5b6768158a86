/// The memory budget's book: what is drawn, what waits, and what may go next. A plain value,
/// so its rules are tested without threads; `MemoryBudget` carries its decisions out.
///
/// Two kinds of draw:
/// - **input**: a transfer's body. It waits until the bodies drawn so far leave room within the
///   input share (a quarter of the budget), then draws an estimate, resized to the real body when
///   it has arrived. So bodies waiting for their decode never fill the budget.
/// - **work**: a decode's predicted peak, drawn before its pixels are made and held until they
///   are gone. Work waits, highest priority first and first come first served within one, until
///   it fits; work that can never fit (more than the whole budget) is refused by the caller.
///
/// Progress: when no work holds a draw, the next work goes even if bodies leave it too little
/// room, since nothing else would ever free any (the bodies belong to work waiting in this very
/// queue). So the drawn total can pass the budget by at most the input share.
struct MemoryLedger<Waiter> {
    typealias Kind = MemoryDrawKind

    struct Ticket {
        let id: Int
        let kind: Kind
        let bytes: Int
        let priority: Priority
        let sequence: Int
        let waiter: Waiter
    }

    /// The budget, in bytes.
    let capacity: Int
    /// Bodies may take this much before transfers wait: a quarter of the budget.
    var inputShare: Int { capacity / 4 }
    /// Bytes drawn now, by every kind.
    private(set) var drawn = 0
    /// Bytes drawn by bodies now.
    private(set) var inputDrawn = 0
    /// Work draws held now.
    private(set) var workHeld = 0
    private(set) var queue: [Ticket] = []
    private var sequence = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Whether work of `bytes` could ever go: no more than the whole budget.
    func canFit(_ bytes: Int) -> Bool { bytes <= capacity }

    /// Draws at once if the rules let a newcomer go now (nothing of its kind waits ahead of it).
    mutating func tryDraw(_ kind: Kind, _ bytes: Int) -> Bool {
        guard !queue.contains(where: { $0.kind == kind }), fits(kind, bytes) else { return false }
        take(kind, bytes)
        return true
    }

    mutating func enqueue(id: Int, kind: Kind, bytes: Int, priority: Priority, waiter: Waiter) {
        sequence += 1
        queue.append(Ticket(id: id, kind: kind, bytes: bytes, priority: priority, sequence: sequence, waiter: waiter))
    }

    /// Gives back a draw and returns the tickets that now go; the caller resumes them.
    mutating func release(_ kind: Kind, _ bytes: Int) -> [Ticket] {
        drawn -= bytes
        if kind == .input { inputDrawn -= bytes } else { workHeld -= 1 }
        return grants()
    }

    /// A body's draw becomes its real size (more or less than the estimate): it is already in
    /// memory, so this never waits. Returns the tickets that now go.
    mutating func resizeInput(from old: Int, to new: Int) -> [Ticket] {
        drawn += new - old
        inputDrawn += new - old
        return grants()
    }

    /// Removes a waiting ticket (its work was cancelled or waited too long); nil if it already went.
    mutating func remove(id: Int) -> Ticket? {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
        let ticket = queue.remove(at: index)
        return ticket
    }

    /// Tickets that go now, in order: the best waiting work while it fits (or nothing else holds
    /// a work draw), then bodies while they fit their share.
    mutating func grants() -> [Ticket] {
        var granted: [Ticket] = []
        for kind in [Kind.work, .input] {
            while let index = best(kind), fits(kind, queue[index].bytes) {
                let ticket = queue.remove(at: index)
                take(kind, ticket.bytes)
                granted.append(ticket)
            }
        }
        return granted
    }

    private func fits(_ kind: Kind, _ bytes: Int) -> Bool {
        switch kind {
        case .work: drawn + bytes <= capacity || workHeld == 0
        case .input: inputDrawn + bytes <= inputShare || inputDrawn == 0
        }
    }

    private mutating func take(_ kind: Kind, _ bytes: Int) {
        drawn += bytes
        if kind == .input { inputDrawn += bytes } else { workHeld += 1 }
    }

    private func best(_ kind: Kind) -> Int? {
        var best: Int?
        for index in queue.indices where queue[index].kind == kind {
            guard let current = best else { best = index; continue }
            let a = queue[index], b = queue[current]
            if a.priority > b.priority || (a.priority == b.priority && a.sequence < b.sequence) { best = index }
        }
        return best
    }
}

/// What a draw pays for: a transfer's body, or a decode's pixels.
enum MemoryDrawKind: Equatable, Sendable {
    case input
    case work
}
