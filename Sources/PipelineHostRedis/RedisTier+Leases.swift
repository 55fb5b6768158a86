import PipelineHost
import Tracing

/// One flight across nodes: before a node computes an entry the shared tier keeps, it takes a
/// lease (`SET lock:K token NX PX lease`). The winner computes, stores, and releases the lease
/// (compare-and-delete), extending it meanwhile (compare-and-extend); a failure that would only
/// repeat leaves a short negative entry. The others poll (bounded) until the entry or the
/// negative entry appears, take over when the lease expires (its holder died), and give up after
/// `sharedWait`, computing locally. A waiter wakes when the leader publishes on the done channel,
/// or after the poll interval, since pub/sub can drop a message.
///
/// `LeaseMachine` decides each step; `coordinate` carries its actions out against Redis.
extension RedisTier: WorkCoordinator {
    public func coordinate(_ key: StageKey, at point: CachePoint) async -> Coordination {
        let keys = LeaseKeys(Self.names(key).redis)
        // The lease's value carries the leader's trace context after its token, so a waiter on
        // another node can link its wait to the leader's work.
        let token = Self.token() + LeaseTrace.suffix()
        var machine = LeaseMachine(settings: leases)
        var action = machine.next(after: .miss(now: .now))
        var waitSpan: (any Span)?
        defer { waitSpan?.end() }
        while true {
            let event: LeaseMachine.Event
            do throws(RedisClient.Failure) {
                switch action {
                case .checkEntry:
                    event = .entry(found: try await client.command("EXISTS", keys.value) == .integer(1))
                case .checkNegative:
                    guard case .string(let stored) = try await client.command("GET", keys.negative) else {
                        event = .negative(nil); break
                    }
                    // A negative entry not sealed with the secret is not believed: it could fail every node.
                    event = .negative(unsealed(stored, key: keys.negative).flatMap(NegativeEntry.decode))
                case .setNX:
                    let reply = try await client.command(
                        "SET", keys.lock, token, "NX", "PX", String(leases.milliseconds))
                    event = .lease(won: reply == .status("OK"))
                case .markWaiting(let first):
                    if first {
                        // The leader's context is read while it surely holds the lease, before
                        // the wait is counted (a test waits for the count, then lets it finish).
                        waitSpan = await LeaseTrace.waitSpan(linkedToLeaderOf: keys, client: client)
                        counters.add(\.leasesWaited)
                    }
                    // Tells the leader someone waits, should its own requests leave (`othersWait`).
                    _ = try await client.command(
                        "SET", keys.waiting, "1", "PX", String(leases.waitingMarkerMilliseconds))
                    event = .marked(now: .now, cancelled: Task.isCancelled)
                case .wait(let until):
                    await done.wait(for: keys.digest, upTo: until - .now)
                    event = .woke
                case .release:
                    await release(keys, token: token)
                    event = .released
                case .finish(let outcome):
                    waitSpan?.attributes[SpanNames.leaseOutcome] = LeaseTrace.name(of: outcome)
                    return coordination(outcome, of: key, keys: keys, token: token)
                }
            } catch {
                counters.error(error)
                event = .unreachable
            }
            action = machine.next(after: event)
        }
    }

    /// The machine's outcome as the pipeline takes it, counted.
    private func coordination(
        _ outcome: LeaseMachine.Outcome, of key: StageKey, keys: LeaseKeys, token: String
    ) -> Coordination {
        switch outcome {
        case .lead(let takenOver):
            counters.add(takenOver ? \.leasesTakenOver : \.leasesWon)
            held.add(token, keys: keys, source: key.source)
            return .lead(RedisLease(tier: self, keys: keys, token: token))
        case .lookAgain:
            return .lookAgain
        case .failed(let error):
            counters.add(\.negativeHits)
            return .failed(error)
        case .alone:
            return .alone
        }
    }

    /// The lease of `keys` is done with: delete it if it is still `token`'s.
    func release(_ keys: LeaseKeys, token: String) async {
        _ = try? await client.command("EVAL", Self.compareAndDelete, "1", keys.lock, token)
        _ = try? await client.command("PUBLISH", DoneChannel.name, keys.digest)
    }

    /// Keeps the lease alive while the work runs.
    func extend(_ keys: LeaseKeys, token: String) async -> Bool {
        let reply = try? await client.command(
            "EVAL", Self.compareAndExtend, "1", keys.lock, token, String(leases.milliseconds))
        return reply == .integer(1)
    }

    /// Leaves a negative entry for a failure other nodes would only repeat.
    func rememberFailure(_ error: PipelineError, _ keys: LeaseKeys) async {
        guard let value = NegativeEntry.encode(error) else { return }
        _ = try? await client.command([
            Array("SET".utf8), Array(keys.negative.utf8), sealed(value, key: keys.negative),
            Array("PX".utf8), Array(String(leases.negativeMilliseconds).utf8),
        ])
    }

    static let compareAndDelete =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
    static let compareAndExtend =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"

    static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
    }
}

/// How leases behave: their length (extended while the work runs), how long a waiter waits
/// before computing itself, how often it looks, and how long a negative entry lasts.
public struct LeaseSettings: Sendable {
    public var lease: Duration
    public var wait: Duration
    public var poll: Duration
    public var negative: Duration

    /// A lease's length when nothing says otherwise (`--shared-lease`).
    public static let defaultLease: Duration = .seconds(10)
    /// How long a waiter waits for another node's work when nothing says otherwise (`--shared-wait`).
    public static let defaultWait: Duration = .seconds(15)

    public init(
        lease: Duration = LeaseSettings.defaultLease, wait: Duration = LeaseSettings.defaultWait,
        poll: Duration = .milliseconds(100),
        negative: Duration = .seconds(30)
    ) {
        self.lease = lease
        self.wait = wait
        self.poll = poll
        self.negative = negative
    }

    var milliseconds: Int { Self.milliseconds(lease) }
    /// A waiter renews its marker at every look (at least once per poll); it outlives a few
    /// missed looks, and a waiter that left, by at most this long.
    var waitingMarkerMilliseconds: Int { max(1000, 3 * Self.milliseconds(poll)) }
    var negativeMilliseconds: Int { Self.milliseconds(negative) }

    static func milliseconds(_ duration: Duration) -> Int {
        max(1, duration.wholeMilliseconds)
    }
}

/// The Redis keys of one entry: the value, its lease, its negative entry, and the marker that
/// other nodes wait for it. All carry the digest as their hash tag (`{digest}`), so in a Redis
/// Cluster they live in one slot, and the compare-and-delete and compare-and-extend scripts,
/// which touch one key, keep working on its shard.
struct LeaseKeys: Sendable {
    static let valuePrefix = "pipelinehost:v1:{"

    let value: String
    let lock: String
    let negative: String
    let waiting: String

    /// The SHA-256 of the step key, in hex: what the done channel carries.
    let digest: String

    init(_ value: String) {
        self.value = value
        digest = String(value.dropFirst(Self.valuePrefix.count).dropLast())
        lock = "pipelinehost:v1:lock:{" + digest + "}"
        negative = "pipelinehost:v1:neg:{" + digest + "}"
        waiting = "pipelinehost:v1:waiting:{" + digest + "}"
    }
}

/// A lease this node holds: extended in the background until `finished`; released once the
/// entry is stored (or, after a failure, at once), or when a purge of its source revokes it
/// (its extender then stops, finding the lease gone). When this node's requests leave, the work
/// goes on if another node's waiter has marked the entry (`othersWait`).
final class RedisLease: WorkLease {
    let tier: RedisTier
    let keys: LeaseKeys
    let token: String
    private let extender: Task<Void, Never>

    init(tier: RedisTier, keys: LeaseKeys, token: String) {
        self.tier = tier
        self.keys = keys
        self.token = token
        let every = tier.leases.lease / 3
        // Owned by this lease, which ends it in `finished`; not the tier's drain, which must not
        // wait for (or cut short) work still in flight, such as a reload's other pipeline's.
        extender = Task { [tier, keys, token] in
            while !Task.isCancelled {
                try? await Task.sleep(for: every)
                guard !Task.isCancelled, await tier.extend(keys, token: token) else { return }
            }
        }
    }

    func othersWait() async -> Bool {
        (try? await tier.client.command("EXISTS", keys.waiting)) == .integer(1)
    }

    func finished(_ outcome: Result<Void, PipelineError>, shareable: Bool) {
        extender.cancel()
        let (tier, keys, token) = (tier, keys, token)
        switch outcome {
        case .success:
            // The entry is stored when a request using it succeeds, moments from now: release
            // then, so waiters find it; without a store (no-store, or a later step failed),
            // release after a short grace anyway.
            tier.releaseWhenStored(keys, token: token)
        case .failure(let error):
            // A lease a purge revoked is neither released again nor remembered as a failure.
            guard tier.held.take(token) != nil else { return }
            tier.background.run {
                if shareable, NegativeEntry.isWorthRemembering(error) { await tier.rememberFailure(error, keys) }
                await tier.release(keys, token: token)
            }
        }
    }
}

/// A failure as a negative entry: kind, reason and the failing layer's fields (an upstream
/// status among them), so a waiter fails the same way and serve answers the same status.
enum NegativeEntry {
    /// Failures that would only repeat within seconds; transient ones (timeouts, refused
    /// connections, 5xx) are not remembered.
    static func isWorthRemembering(_ error: PipelineError) -> Bool {
        // This node's own credentials refused: another node, or this one fixed, would succeed.
        if error.isLocalConfiguration { return false }
        return switch error.kind {
        case .notAnImage, .unsupportedFormat, .pixelLimit, .tooLarge, .decodeFailed, .blocked, .invalidSource: true
        case .httpStatus:
            (400..<500).contains(error.upstreamStatus ?? 0)
        default: false
        }
    }

    static func encode(_ error: PipelineError) -> [UInt8]? {
        var lines = ["kind=" + error.kind.name, "reason=" + error.reason.split(separator: "\n").joined(separator: " ")]
        for (name, field) in error.details?.jsonFields ?? [:] {
            if case .integer(let value) = field { lines.append("int:\(name)=\(value)") }
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    static func decode(_ bytes: [UInt8]) -> PipelineError? {
        var kind: String?, reason = "", fields: [String: ErrorField] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals], value = String(line[line.index(after: equals)...])
            switch name {
            case "kind": kind = value
            case "reason": reason = value
            default:
                if name.hasPrefix("int:"), let number = Int(value) {
                    fields[String(name.dropFirst(4))] = .integer(number)
                }
            }
        }
        guard let kind else { return nil }
        return PipelineError(
            PipelineError.Kind(named: kind), reason + " (remembered by the shared cache)",
            details: fields.isEmpty ? nil : StoredDetails(jsonFields: fields))
    }
}

/// Details read back from a negative entry: the fields as the failing layer wrote them.
struct StoredDetails: ErrorDetails {
    let jsonFields: [String: ErrorField]

    /// The upstream status the entry recorded (fetch writes it as http_status).
    var upstreamStatus: Int? { if case .integer(let status) = jsonFields["http_status"] { status } else { nil } }
}
