/// The value of one step of a chain (a stage prefix), as its waiters receive it, with how it
/// came about.
struct StepValue: Sendable {
    var value: StageValue
    /// Timings of every step so far, cache lookups included.
    var timings: [PipelineResult.StageTiming]
    /// Whether some step on the way joined work started for another request.
    var coalesced: Bool
    /// Whether some cache point on the way answered from memory, from disk, or from a tier
    /// after disk (a shared one).
    var memoryHit = false
    var diskHit = false
    var sharedHit = false
    /// The name of the tier after disk that answered.
    var sharedTier: String?
    /// Whether some cache point served an entry past its freshness.
    var stale = false
    /// The earliest time (wall clock) a cached or fetched input stops being fresh; entries made
    /// from this value expire no later.
    var expiresAt: Double?
    /// The origin said Cache-Control: no-store; nothing made from it is stored.
    var noStore = false
    /// The version (validators) of the original this value was made from; variants record it.
    var originVersion: String?
    /// Stores that wait for a request using this value to succeed, so an original that turns
    /// out not to decode is never kept.
    var pending: [CacheWrite] = []
    /// What this value holds of the memory budget (a fetched body, a decode's predicted peak):
    /// given back when the last value carrying it is gone.
    var memory: [MemoryDraw] = []

    init(value: StageValue, timings: [PipelineResult.StageTiming], coalesced: Bool) {
        self.value = value
        self.timings = timings
        self.coalesced = coalesced
    }

    /// A stored entry as a step's value, found in `lookup` time; `stale` when past its freshness.
    init(stored entry: CacheEntry, lookup: Duration, stale: Bool) {
        self.init(value: .encoded(entry.image), timings: [.init(stage: "cache", duration: lookup)], coalesced: false)
        self.stale = stale
        expiresAt = entry.expiresAt
        originVersion = entry.origin ?? entry.image.cacheHints?.validators.version
    }

    /// This value as the input to the next step: everything but the value and timings carries
    /// on, and what an origin said about freshness binds everything made from its bytes (from
    /// `now`, seconds since 1970).
    func carrying(_ value: StageValue, timings: [PipelineResult.StageTiming], now: Double) -> StepValue {
        var next = self
        next.value = value
        next.timings = timings
        // Encoded from an image: its pixels and the body they came from go with the image.
        if case .encoded = value, case .image = self.value { next.memory = [] }
        if case .encoded(let encoded) = value, let hints = encoded.cacheHints {
            next.noStore = next.noStore || hints.noStore
            if let version = hints.validators.version { next.originVersion = version }
            if let maxAge = hints.maxAge { next.expiresAt = min(next.expiresAt ?? .infinity, now + maxAge) }
        }
        return next
    }

    /// The first step's input: the source, with `validators` for a conditional fetch.
    init(source: Source, validators: Validators?) {
        var source = source
        source.validators = validators
        self.init(value: .source(source), timings: [], coalesced: false)
    }

    /// This value as a waiter that joined work another started gets it.
    func sharing() -> StepValue {
        var shared = self
        shared.coalesced = true
        return shared
    }

    /// This value, if the store of `key`'s entry in it waits for its request to end.
    func awaitingCommit(of key: StageKey) -> StepValue? {
        pending.contains { $0.key == key && !$0.isCommitted } ? self : nil
    }
}

typealias StepOutcome = Result<StepValue, PipelineError>
