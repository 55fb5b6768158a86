import PipelineHost

/// The lease protocol of one miss, as a value: every event (what Redis answered, a wake-up,
/// the time) returns the next action, and `RedisTier.coordinate` only carries actions out.
/// The model is async-http-client's state machines: the rules, and the races they close, are
/// tested with a scripted fake in microseconds (`LeaseMachineTests`), with no redis-server.
///
/// The protocol: a fresh miss looks for a negative entry (a failure a moment ago has released
/// its lease already), then tries the lease (`SET lock NX`). The winner leads. A loser marks
/// that it waits (so a leader whose own requests leave goes on), and waits for the done message
/// or the poll tick; then it looks for the entry, the negative entry, and the lease again, until
/// `wait` has passed since the miss (then it works alone). A waiter that wins the lease looks
/// for the entry once more before it leads: the leader may have stored and released between its
/// look and its `SET`, and then there is nothing to take over.
struct LeaseMachine {
    enum Event {
        /// The pipeline missed at the point, at `now`.
        case miss(now: ContinuousClock.Instant)
        /// The entry's value exists (`EXISTS`), or not.
        case entry(found: Bool)
        /// The negative entry, if one is there and reads back.
        case negative(PipelineError?)
        /// The lease was won (`SET NX` answered OK), or another holds it.
        case lease(won: Bool)
        /// The waiting marker is set; `now` and whether the waiting task was cancelled.
        case marked(now: ContinuousClock.Instant, cancelled: Bool)
        /// The done message came for the entry, or the poll tick passed.
        case woke
        /// The lease won in vain is released.
        case released
        /// A command failed: Redis is unreachable or answered an error.
        case unreachable
    }

    enum Action {
        case checkEntry
        case checkNegative
        case setNX
        /// Sets the waiting marker; `first`: this miss had not waited before (count it).
        case markWaiting(first: Bool)
        /// Waits for the done message, at most until `until`; then `woke`.
        case wait(until: ContinuousClock.Instant)
        /// Releases the lease just won: the entry turned out to be there.
        case release
        /// The end: what the pipeline does about its miss.
        case finish(Outcome)
    }

    enum Outcome {
        /// Lead the work; `takenOver`: after waiting (the leader died, or its lease lapsed).
        case lead(takenOver: Bool)
        case lookAgain
        case failed(PipelineError)
        case alone
    }

    private enum State {
        case idle
        case checkingNegative
        case settingLease
        case marking
        case waiting
        case checkingEntry
        /// Won the lease after waiting: is the entry there after all?
        case confirmingWin
        case releasing
        case finished
    }

    let settings: LeaseSettings
    private var state = State.idle
    private var waited = false
    private var deadline: ContinuousClock.Instant?

    init(settings: LeaseSettings) { self.settings = settings }

    mutating func next(after event: Event) -> Action {
        switch (state, event) {
        case (.idle, .miss(let now)):
            deadline = now + settings.wait
            return move(.checkingNegative, .checkNegative)
        case (.finished, _):
            preconditionFailure("the lease protocol had already finished: \(event)")
        case (_, .unreachable):
            return finish(.alone)
        case (.checkingNegative, .negative(let error)):
            if let error { return finish(.failed(error)) }
            return move(.settingLease, .setNX)
        case (.settingLease, .lease(won: true)):
            return waited ? move(.confirmingWin, .checkEntry) : finish(.lead(takenOver: false))
        case (.settingLease, .lease(won: false)):
            defer { waited = true }
            return move(.marking, .markWaiting(first: !waited))
        case (.marking, .marked(let now, let cancelled)):
            guard let deadline, now < deadline, !cancelled else { return finish(.alone) }
            return move(.waiting, .wait(until: now + settings.poll))
        case (.waiting, .woke):
            return move(.checkingEntry, .checkEntry)
        case (.checkingEntry, .entry(let found)):
            return found ? finish(.lookAgain) : move(.checkingNegative, .checkNegative)
        case (.confirmingWin, .entry(let found)):
            return found ? move(.releasing, .release) : finish(.lead(takenOver: true))
        case (.releasing, .released):
            return finish(.lookAgain)
        default:
            preconditionFailure("the lease protocol got \(event) in \(state)")
        }
    }

    private mutating func move(_ state: State, _ action: Action) -> Action {
        self.state = state
        return action
    }

    private mutating func finish(_ outcome: Outcome) -> Action {
        move(.finished, .finish(outcome))
    }
}

// Equal when the same thing happens; errors compare by kind and reason (PipelineError carries
// details that are not Equatable). For tests, and the precondition messages.
extension LeaseMachine.Event: Equatable {
    static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.miss(let x), .miss(let y)): x == y
        case (.entry(let x), .entry(let y)): x == y
        case (.negative(let x), .negative(let y)): x?.kind == y?.kind && x?.reason == y?.reason
        case (.lease(let x), .lease(let y)): x == y
        case (.marked(let x, let c), .marked(let y, let d)): x == y && c == d
        case (.woke, .woke), (.released, .released), (.unreachable, .unreachable): true
        default: false
        }
    }
}

extension LeaseMachine.Outcome: Equatable {
    static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.lead(let x), .lead(let y)): x == y
        case (.lookAgain, .lookAgain), (.alone, .alone): true
        case (.failed(let x), .failed(let y)): x.kind == y.kind && x.reason == y.reason
        default: false
        }
    }
}

extension LeaseMachine.Action: Equatable {}
