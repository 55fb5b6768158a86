/// Callers of `Pipeline.waitForActivity` whose condition did not hold yet. A plain value the
/// actor owns: `answer` picks who to resume for a given activity, and resumes them.
struct ActivityWaiters {
    typealias Condition = @Sendable (PipelineActivity) -> Bool
    private var waiting: [Int: (condition: Condition, continuation: CheckedContinuation<Void, Never>)] = [:]

    var isEmpty: Bool { waiting.isEmpty }

    mutating func add(_ id: Int, _ condition: @escaping Condition, _ continuation: CheckedContinuation<Void, Never>) {
        waiting[id] = (condition, continuation)
    }

    /// Resumes every waiter whose condition holds for `activity`.
    mutating func answer(_ activity: PipelineActivity) {
        for (id, waiter) in waiting where waiter.condition(activity) {
            waiting[id] = nil
            waiter.continuation.resume()
        }
    }

    /// Resumes a waiter whose task was cancelled.
    mutating func drop(_ id: Int) {
        waiting.removeValue(forKey: id)?.continuation.resume()
    }
}
