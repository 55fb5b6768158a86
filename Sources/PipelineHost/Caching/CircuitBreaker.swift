/// Opens after `threshold` failures in a row: calls fail at once for `cooldown`, then one call
/// is let through, and a success closes it again. So a Redis that is down costs one timeout per
/// cooldown, not one per request.
public final class CircuitBreaker: Sendable {
    private let state: Locked<BreakerState>

    /// A breaker that opens after `threshold` failures in a row, for `cooldown`.
    public init(threshold: Int = 5, cooldown: Duration = .seconds(1)) {
        state = Locked(BreakerState(threshold: threshold, cooldown: cooldown))
    }

    /// How many times it has opened.
    public var timesOpened: Int { state.withLock { $0.timesOpened } }

    /// A new, closed breaker with this one's threshold and cooldown (one per node of a cluster).
    package func sibling() -> CircuitBreaker {
        let (threshold, cooldown) = state.withLock { ($0.threshold, $0.cooldown) }
        return CircuitBreaker(threshold: threshold, cooldown: cooldown)
    }
    /// Whether calls fail at once now (or one probe is let through).
    public var isOpen: Bool { state.withLock { $0.isOpen } }
    /// Whether the next call would go out: closed, or open with its cooldown over and no probe out.
    public var wouldAllowCall: Bool { state.withLock { $0.wouldAllowCall(at: .now) } }

    package func allowsCall() -> Bool { state.withLock { $0.allowsCall(at: .now) } }
    package func succeeded() { state.withLock { $0.succeeded() } }
    package func failed() { state.withLock { $0.failed(at: .now) } }
}

/// The circuit breaker's decisions as a value, given the time: tested without sleeping.
public struct BreakerState: Sendable, Equatable {
    /// Failures in a row that open it.
    public let threshold: Int
    /// How long it stays open before one probe is let through.
    public let cooldown: Duration
    private var failures = 0
    private var openUntil: ContinuousClock.Instant?
    private var probing = false
    /// How many times it has opened.
    public private(set) var timesOpened = 0

    /// A closed breaker.
    public init(threshold: Int, cooldown: Duration) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    /// Whether it is open (calls fail at once until the cooldown ends, then one probe).
    public var isOpen: Bool { openUntil != nil }

    /// Whether `allowsCall(at: now)` would let a call go out, without taking the probe.
    public func wouldAllowCall(at now: ContinuousClock.Instant) -> Bool {
        guard let until = openUntil else { return true }
        return now >= until && !probing
    }

    /// Whether a call may go out at `now`: always when closed; when open, one probe once the
    /// cooldown has passed, and no other call until that probe succeeds or fails.
    public mutating func allowsCall(at now: ContinuousClock.Instant) -> Bool {
        guard let until = openUntil else { return true }
        guard now >= until, !probing else { return false }
        probing = true
        return true
    }

    /// A call succeeded: closed again.
    public mutating func succeeded() {
        failures = 0
        openUntil = nil
        probing = false
    }

    /// A call failed at `now`: the threshold-th failure in a row opens it (a failed probe opens
    /// it again) until `now + cooldown`.
    public mutating func failed(at now: ContinuousClock.Instant) {
        failures += 1
        probing = false
        if failures >= threshold {
            if openUntil == nil { timesOpened += 1 }
            openUntil = now + cooldown
        }
    }
}
