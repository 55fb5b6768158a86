import Dispatch

/// Runs blocking calls on Dispatch's global pool instead of Swift's cooperative pool, which has
/// only as many threads as cores and must never be blocked.
public struct BlockingExecutor: Sendable {
    /// The pool every pipeline uses unless it is given its own.
    public static let shared = BlockingExecutor()

    private let queue: DispatchQueue

    /// Runs blocking work on Dispatch's global queue of this quality of service.
    public init(qos: DispatchQoS.QoSClass = .userInitiated) {
        queue = DispatchQueue.global(qos: qos)
    }

    /// Runs `work` on the pool and returns (or throws) what it did. A `work` that cannot
    /// throw makes a call that cannot either.
    public func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        // The continuation alone orders the two threads, but when work finishes before the
        // awaiting task has fully suspended, the runtime hands over through atomics that
        // ThreadSanitizer cannot see, and it reports the result as a race. A mutex it can see
        // makes the handover visible, for the cost of one uncontended lock.
        let handoff = Locked<Result<T, E>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                let result = Result { () throws(E) -> T in try work() }
                handoff.withLock { $0 = result }
                continuation.resume()
            }
        }
        return try handoff.withLock { $0! }.get()
    }
}
