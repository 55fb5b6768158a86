/// Runs blocking calls on threads of their own instead of Swift's cooperative pool, which has
/// only as many threads as cores and must never be blocked.
///
/// Each kind of blocking work has its own pool, so none waits behind another: transfers (which
/// may trickle for minutes from a slow origin), pixel work, and file I/O (disk-cache reads and
/// writes, profile files). A pipeline runs each stage on its role's pool.
public struct BlockingExecutor: Sendable {
    /// File I/O: disk-cache reads and writes, profile files, output files.
    public static let shared = BlockingExecutor(ThreadPool(name: "pipelinehost.io", maxThreads: 16))
    /// Transfers: as many threads as transfers may run at once in the process.
    public static let transfers = BlockingExecutor(ThreadPool(name: "pipelinehost.transfer", maxThreads: 512))
    /// Pixel work (decode, process, encode): the CPU lane bounds how many run at once.
    public static let pixels = BlockingExecutor(ThreadPool(name: "pipelinehost.pixels", maxThreads: 256))

    private let pool: ThreadPool

    init(_ pool: ThreadPool) { self.pool = pool }

    /// A pool of its own with at most `maxThreads` threads, started as needed.
    public init(name: String, maxThreads: Int) {
        pool = ThreadPool(name: name, maxThreads: maxThreads)
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
            pool.submit {
                let result = Result { () throws(E) -> T in try work() }
                handoff.withLock { $0 = result }
                continuation.resume()
            }
        }
        return try handoff.withLock { $0! }.get()
    }
}
