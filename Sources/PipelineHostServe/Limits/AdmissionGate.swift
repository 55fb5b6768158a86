import PipelineHost

/// Backpressure for one bounded kind of work (image requests, prefetch batches, purges): at
/// most `limit` admitted at once. One more is refused at once, with 503 `queue_full` and
/// Retry-After, so memory never grows with the number of clients.
final class AdmissionGate: Sendable {
    let limit: Int
    /// What the refusal says is full, such as "requests are waiting (--max-queue)".
    let full: String
    private let admitted = Locked(0)

    init(limit: Int, full: String) {
        self.limit = max(1, limit)
        self.full = full
    }

    /// Admits one; false when full. A true answer must be paired with `leave()`.
    func enter() -> Bool {
        admitted.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Admits one, or throws the 503 with `Retry-After: 1` that a full queue gets. Pair it with
    /// `leave()`.
    func admit() throws(ServeFailure) {
        guard enter() else {
            var busy = ServeFailure(.serviceUnavailable, "queue_full", "\(limit) \(full); try again shortly")
            busy.retryAfter = 1
            throw busy
        }
    }

    func leave() { admitted.withLock { $0 -= 1 } }

    /// Admitted now.
    var count: Int { admitted.withLock { $0 } }

    /// Over 90% full: /ready says 503 so a load balancer sends new work elsewhere.
    var isNearlyFull: Bool { count * 10 > limit * 9 }
}
