import PipelineHost
import Testing

@testable import PipelineHostRedis

/// The lease protocol as a value, against a scripted Redis: one node's machine runs while the
/// test plays the other nodes between its steps. No redis-server, no sleeping; the time is
/// the script's.
@Suite("Lease protocol: every event gives the next action")
struct LeaseMachineTests {
    static let settings = LeaseSettings(lease: .seconds(10), wait: .seconds(1), poll: .milliseconds(100))
    static let notFound = PipelineError(.httpStatus, "HTTP 404")

    /// What the other nodes have left in Redis, as this node's commands see it.
    struct ScriptedRedis {
        var entry = false
        var negative: PipelineError?
        /// Who holds the lease, and until when.
        var lock: (holder: String, until: ContinuousClock.Instant)?
        var now: ContinuousClock.Instant
        /// Set by this node while it waits.
        var waitingMarked = false

        func lockHeld() -> Bool { lock.map { $0.until > now } ?? false }

        /// Another node leads: it holds the lease for `lease`.
        mutating func leaderTakesLease(_ leader: String = "A") {
            lock = (leader, now + settings.lease)
        }

        /// The leader stores the entry, then releases its lease.
        mutating func leaderStoresAndReleases() {
            entry = true
            lock = nil
        }

        /// The leader failed: a negative entry, then the release.
        mutating func leaderFailsAndReleases(_ error: PipelineError) {
            negative = error
            lock = nil
        }
    }

    /// Runs this node's machine to the end. `between` is called before each action is carried
    /// out, with how many actions came before it, so the test can act for the other nodes.
    /// `failAt`: the action at that index finds Redis unreachable.
    static func drive(
        _ redis: inout ScriptedRedis, failAt: Int? = nil, cancelledAt: Int? = nil,
        between: (Int, LeaseMachine.Action, inout ScriptedRedis) -> Void = { _, _, _ in }
    )
        -> (actions: [LeaseMachine.Action], outcome: LeaseMachine.Outcome)
    {
        var machine = LeaseMachine(settings: settings)
        var action = machine.next(after: .miss(now: redis.now))
        var actions: [LeaseMachine.Action] = []
        while true {
            if case .finish(let outcome) = action { return (actions, outcome) }
            between(actions.count, action, &redis)
            actions.append(action)
            let event: LeaseMachine.Event
            if actions.count - 1 == failAt {
                event = .unreachable
            } else {
                switch action {
                case .checkEntry: event = .entry(found: redis.entry)
                case .checkNegative: event = .negative(redis.negative)
                case .setNX:
                    let won = !redis.lockHeld()
                    if won { redis.lock = ("B", redis.now + settings.lease) }
                    event = .lease(won: won)
                case .markWaiting:
                    redis.waitingMarked = true
                    event = .marked(now: redis.now, cancelled: actions.count - 1 == cancelledAt)
                case .wait(let until):
                    // The poll tick (or the done message) at `until`.
                    redis.now = until
                    event = .woke
                case .release:
                    if redis.lock?.holder == "B" { redis.lock = nil }
                    event = .released
                case .finish: preconditionFailure("handled above")
                }
            }
            action = machine.next(after: event)
        }
    }

    let start = ContinuousClock.now

    @Test("a fresh miss nobody leads: it leads, and never looks for the entry it just missed")
    func freshMissLeads() {
        var redis = ScriptedRedis(now: start)
        let run = Self.drive(&redis)
        #expect(run.actions == [.checkNegative, .setNX])
        #expect(run.outcome == .lead(takenOver: false))
        #expect(redis.lock?.holder == "B")
    }

    /// The second race fixed in the Redis tier: the leader fails, leaves its negative entry and
    /// releases its lease; a miss right then finds the lease free. It must fail as the leader
    /// did, not lead the same failing work again.
    @Test("a fresh miss right after another node's failure fails as it did, though the lease is free")
    func freshMissAfterFailure() {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        redis.leaderFailsAndReleases(Self.notFound)
        #expect(!redis.lockHeld(), "the lease alone would let it lead")
        let run = Self.drive(&redis)
        #expect(run.actions == [.checkNegative])
        #expect(run.outcome == .failed(Self.notFound))
        #expect(redis.lock == nil, "it took no lease")
    }

    /// The first race: a waiter looks (no entry), the leader stores and releases, the waiter's
    /// `SET NX` then wins. Leading would compute the entry twice; it looks again instead, and
    /// gives back the lease it won in vain.
    @Test("a waiter that wins the lease between the leader's store and release looks again")
    func winBetweenStoreAndRelease() {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        var setNXCount = 0
        let run = Self.drive(&redis) { _, action, redis in
            guard action == .setNX else { return }
            setNXCount += 1
            // Between the waiter's second look and its second SET NX.
            if setNXCount == 2 { redis.leaderStoresAndReleases() }
        }
        #expect(
            run.actions == [
                .checkNegative, .setNX, .markWaiting(first: true), .wait(until: start + Self.settings.poll),
                .checkEntry, .checkNegative, .setNX, .checkEntry, .release,
            ])
        #expect(run.outcome == .lookAgain)
        #expect(redis.lock == nil, "the lease won in vain is given back")
    }

    @Test("a waiter finds the leader's entry when it wakes")
    func waiterFindsEntry() {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        let run = Self.drive(&redis) { _, action, redis in
            if case .wait = action { redis.leaderStoresAndReleases() }
        }
        #expect(run.actions.last == .checkEntry)
        #expect(run.outcome == .lookAgain)
        #expect(redis.waitingMarked, "the leader could see that someone waits")
    }

    @Test("a waiter sees the leader's negative entry and fails the same way")
    func waiterSeesNegative() {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        let run = Self.drive(&redis) { _, action, redis in
            if case .wait = action { redis.leaderFailsAndReleases(Self.notFound) }
        }
        #expect(run.actions.suffix(2) == [.checkEntry, .checkNegative])
        #expect(run.outcome == .failed(Self.notFound))
    }

    @Test("a lease whose holder died lapses, and a waiter takes it over")
    func takeover() {
        var redis = ScriptedRedis(now: start)
        // The leader died holding a lease that lapses 250 ms from now.
        redis.lock = ("A", start + .milliseconds(250))
        let run = Self.drive(&redis)
        let marks = run.actions.filter { if case .markWaiting = $0 { true } else { false } }
        #expect(
            marks == [.markWaiting(first: true), .markWaiting(first: false), .markWaiting(first: false)],
            "counted as one wait")
        #expect(run.actions.suffix(3) == [.checkNegative, .setNX, .checkEntry])
        #expect(run.outcome == .lead(takenOver: true))
        #expect(redis.lock?.holder == "B")
    }

    @Test("a waiter gives up once `wait` has passed since its miss, and works alone")
    func lapse() {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        let run = Self.drive(&redis)
        let waits = run.actions.filter { if case .wait = $0 { true } else { false } }
        #expect(waits.count == 10, "one second of 100 ms polls")
        #expect(redis.now == start + .seconds(1))
        #expect(run.actions.last == .markWaiting(first: false))
        #expect(run.outcome == .alone)
    }

    @Test("a cancelled waiter stops waiting at once")
    func cancelled() {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        let run = Self.drive(&redis, cancelledAt: 2)
        #expect(run.actions == [.checkNegative, .setNX, .markWaiting(first: true)])
        #expect(run.outcome == .alone)
    }

    /// The steps that send a command: the path below is checkNegative, setNX, markWaiting,
    /// wait, checkEntry, checkNegative, setNX, checkEntry, release (which ignores errors).
    @Test("Redis unreachable at any command: the node works alone", arguments: [0, 1, 2, 4, 5, 6, 7])
    func unreachable(at step: Int) {
        var redis = ScriptedRedis(now: start)
        redis.leaderTakesLease()
        var setNXCount = 0
        // The path with every kind of step: wait, look, win in vain, release.
        let run = Self.drive(&redis, failAt: step) { _, action, redis in
            guard action == .setNX else { return }
            setNXCount += 1
            if setNXCount == 2 { redis.leaderStoresAndReleases() }
        }
        #expect(run.actions.count == step + 1)
        #expect(run.outcome == .alone)
    }
}
