import Dispatch
#if canImport(Glibc)
import Glibc
#endif

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
        let handoff = Handoff<Result<T, E>>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                handoff.put(Result { () throws(E) -> T in try work() })
                continuation.resume()
            }
        }
        return try handoff.take().get()
    }
}

/// A value passed from a pool thread to the awaiting task under a pthread mutex.
///
/// The continuation alone already orders the two, but when work finishes before the awaiting
/// task has fully suspended, the Swift runtime hands over through atomics that ThreadSanitizer
/// cannot see, and it reports the result's memory as a race. A mutex it can see makes the
/// handover visible, for the cost of one uncontended lock.
private final class Handoff<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value?

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func put(_ value: Value) {
        pthread_mutex_lock(mutex)
        self.value = value
        pthread_mutex_unlock(mutex)
    }

    func take() -> Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value!
    }
}
