import PipelineHost

/// Backpressure: at most `limit` image requests are admitted at once (waiting for or running
/// in the pipeline). One more is refused at once, with 503 and Retry-After, so memory never
/// grows with the number of clients.
final class AdmissionGate: Sendable {
    let limit: Int
    private let admitted = Locked(0)

    init(limit: Int) { self.limit = max(1, limit) }

    /// Admits one request; false when full. A true answer must be paired with `leave()`.
    func enter() -> Bool {
        admitted.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { admitted.withLock { $0 -= 1 } }

    /// Requests admitted now.
    var count: Int { admitted.withLock { $0 } }

    /// Over 90% full: /ready says 503 so a load balancer sends new work elsewhere.
    var isNearlyFull: Bool { count * 10 > limit * 9 }
}
