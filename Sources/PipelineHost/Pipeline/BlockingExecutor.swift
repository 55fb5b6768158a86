import Dispatch

/// Runs blocking calls on Dispatch's global pool instead of Swift's cooperative pool, which has
/// only as many threads as cores and must never be blocked.
public struct BlockingExecutor: Sendable {
    public static let shared = BlockingExecutor()

    private let queue: DispatchQueue

    public init(qos: DispatchQoS.QoSClass = .userInitiated) {
        queue = DispatchQueue.global(qos: qos)
    }

    /// Runs `work` on the pool and returns (or throws) what it did. A `work` that cannot
    /// throw makes a call that cannot either.
    public func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }
        }
        return try result.get()
    }
}
