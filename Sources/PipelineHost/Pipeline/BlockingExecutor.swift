import Dispatch

/// Runs blocking calls on Dispatch's global pool instead of Swift's cooperative pool, which has
/// only as many threads as cores and must never be blocked.
public struct BlockingExecutor: Sendable {
    public static let shared = BlockingExecutor()

    private let queue: DispatchQueue

    public init(qos: DispatchQoS.QoSClass = .userInitiated) {
        queue = DispatchQueue.global(qos: qos)
    }

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
