/// Bytes a process's image work may hold at once: every transfer's body and every decode's
/// predicted peak draw from it before they take memory, and wait (by priority) while it is
/// drawn. The rules are `MemoryLedger`'s; this class keeps the waiters and the draws.
///
/// A draw is a `MemoryDraw` object, given back when the last reference to it goes: the pipeline
/// hands it along with the value it pays for (a body, a decoded image), so the bytes come back
/// when that value is gone, whoever held it last.
public final class MemoryBudget: Sendable {
    /// The budget, in bytes.
    public let capacity: Int
    private let state: Locked<State>

    private struct State {
        var ledger: MemoryLedger<CheckedContinuation<Bool, Never>>
        var lastID = 0
        /// The last bodies' mean size, as the estimate a transfer draws before its body's size
        /// is known: transfers of large bodies start fewer at once.
        var bodyEstimate = 1 << 20
        var waits = 0
        var refusals = 0
        var timeouts = 0
        /// Waits whose ticket is not in the ledger yet, and those of them withdrawn already.
        var unqueued: Set<Int> = []
        var withdrawnEarly: Set<Int> = []
        /// Waits withdrawn because they passed their limit.
        var timedOut: Set<Int> = []
    }

    /// Called with the new usage after every change, outside the lock (metrics).
    private let observe: @Sendable (MemoryUsage) -> Void

    /// A budget of `capacity` bytes; `observe` gets its figures after every change.
    public init(capacity: Int, observe: @escaping @Sendable (MemoryUsage) -> Void = { _ in }) {
        self.capacity = max(1, capacity)
        self.observe = observe
        state = Locked(State(ledger: MemoryLedger(capacity: capacity)))
        observe(usage)
    }

    /// Bytes drawn now.
    public var drawn: Int { state.withLock { $0.ledger.drawn } }

    /// What the budget holds and has done, for metrics.
    public var usage: MemoryUsage {
        state.withLock {
            MemoryUsage(
                capacity: capacity, drawn: $0.ledger.drawn, waiting: $0.ledger.queue.count, waits: $0.waits,
                refusals: $0.refusals, timeouts: $0.timeouts)
        }
    }

    /// Whether work of `bytes` could ever go; counts a refusal when not.
    func admits(_ bytes: Int) -> Bool {
        state.withLock { state in
            if state.ledger.canFit(bytes) { return true }
            state.refusals += 1
            return false
        }
    }

    /// Draws room for a body about to be fetched, waiting while bodies hold their share. A
    /// `MemoryWaitEnd` when the calling task was cancelled, or `limit` passed, first.
    func drawForBody(priority: Priority, limit: Duration?) async -> Result<MemoryDraw, MemoryWaitEnd> {
        let estimate = state.withLock { $0.bodyEstimate }
        return await draw(.input, estimate, priority: priority, limit: limit)
    }

    /// Draws a decode's predicted peak, waiting while the budget is drawn.
    func drawForWork(_ bytes: Int, priority: Priority, limit: Duration?) async -> Result<MemoryDraw, MemoryWaitEnd> {
        await draw(.work, bytes, priority: priority, limit: limit)
    }

    private func draw(_ kind: MemoryDrawKind, _ bytes: Int, priority: Priority, limit: Duration?) async
        -> Result<MemoryDraw, MemoryWaitEnd>
    {
        let id: Int? = state.withLock { state in
            guard !state.ledger.tryDraw(kind, bytes) else { return nil }
            state.lastID += 1
            state.waits += 1
            state.unqueued.insert(state.lastID)
            return state.lastID
        }
        defer { observe(usage) }
        guard let id else { return .success(MemoryDraw(kind, bytes, from: self)) }
        let expiry = limit.map { limit in
            Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled { self.withdraw(id, timedOut: true) }
            }
        }
        defer { expiry?.cancel() }
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let go = state.withLock { state -> [MemoryLedger<CheckedContinuation<Bool, Never>>.Ticket]? in
                    state.unqueued.remove(id)
                    // Withdrawn before it got here: a cancellation or an expiry came first.
                    guard state.withdrawnEarly.remove(id) == nil else { return nil }
                    state.ledger.enqueue(id: id, kind: kind, bytes: bytes, priority: priority, waiter: continuation)
                    return state.ledger.grants()
                }
                guard let go else { return continuation.resume(returning: false) }
                for ticket in go { ticket.waiter.resume(returning: true) }
            }
        } onCancel: {
            withdraw(id, timedOut: false)
        }
        guard granted else {
            return .failure(state.withLock { $0.timedOut.remove(id) } != nil ? .timedOut : .cancelled)
        }
        return .success(MemoryDraw(kind, bytes, from: self))
    }

    /// Takes a waiting draw out of the queue; its waiter gets false.
    private func withdraw(_ id: Int, timedOut: Bool) {
        let removed = state.withLock { state -> MemoryLedger<CheckedContinuation<Bool, Never>>.Ticket? in
            let early = state.unqueued.contains(id)
            if early { state.withdrawnEarly.insert(id) }
            let ticket = early ? nil : state.ledger.remove(id: id)
            if early || ticket != nil, timedOut {
                state.timeouts += 1
                state.timedOut.insert(id)
            }
            return ticket
        }
        removed?.waiter.resume(returning: false)
    }

    fileprivate func giveBack(_ kind: MemoryDrawKind, _ bytes: Int) {
        let go = state.withLock { $0.ledger.release(kind, bytes) }
        for ticket in go { ticket.waiter.resume(returning: true) }
        observe(usage)
    }

    fileprivate func resizeBody(from old: Int, to new: Int) {
        let go = state.withLock { state in
            state.bodyEstimate = max(64 << 10, (state.bodyEstimate * 3 + new) / 4)
            return state.ledger.resizeInput(from: old, to: new)
        }
        for ticket in go { ticket.waiter.resume(returning: true) }
        observe(usage)
    }
}

/// Why a wait for memory ended without a draw.
enum MemoryWaitEnd: Error {
    case cancelled
    case timedOut
}

/// Bytes drawn from a budget, given back when the last reference goes.
public final class MemoryDraw: Sendable {
    private let kind: MemoryDrawKind
    private let budget: MemoryBudget
    private let bytes: Locked<Int>

    fileprivate init(_ kind: MemoryDrawKind, _ bytes: Int, from budget: MemoryBudget) {
        self.kind = kind
        self.budget = budget
        self.bytes = Locked(bytes)
    }

    /// A body's draw becomes the size the body turned out to have.
    func resize(to actual: Int) {
        let old = bytes.withLock { bytes in
            defer { bytes = actual }
            return bytes
        }
        budget.resizeBody(from: old, to: actual)
    }

    deinit { budget.giveBack(kind, bytes.withLock { $0 }) }
}

/// A budget's state, for `/metrics` and `--stats`.
public struct MemoryUsage: Sendable, Equatable {
    /// The budget, in bytes.
    public var capacity: Int
    /// Bytes drawn now.
    public var drawn: Int
    /// Draws waiting now.
    public var waiting: Int
    /// Draws that had to wait, so far.
    public var waits: Int
    /// Work refused because it could never fit.
    public var refusals: Int
    /// Draws that waited past their limit.
    public var timeouts: Int
}
