import CoreMetrics
import Crypto
import Logging
import PipelineHost

#if canImport(Glibc)
    import Glibc
#endif

/// A cache tier in Redis, shared by every node (and every `run`) that names the same server:
/// looked in after memory and disk, so a variant one node made is served by the others with no
/// transfer and no decode.
///
/// - Keys are `pipelinehost:v1:{` + SHA-256 of the step key + `}`, so no source (nor a
///   credential in it) reaches Redis, and the entry, its lease, its waiting marker and its
///   negative entry share the hash tag, so a cluster keeps them on one shard; values are the disk cache's self-checking format, whose metadata holds
///   the key redacted.
/// - Each value is written with one `SET key value PX ttl`: atomic, with its expiry.
/// - Eviction is Redis' own (`maxmemory` with `allkeys-lru`).
/// - Redis down, slow or full costs nothing but the tier: a failed call is a miss, stores are
///   dropped, and the circuit breaker stops calling it for a while.
public final class RedisTier: CacheTier {
    public let name = "shared"
    let client: RedisClient
    /// Originals larger than this stay out (variants are small).
    let maxEntryBytes: Int
    /// How long after its freshness an entry stays, so `on_error = "stale"` can still use it.
    let staleFor: Double
    /// The tasks this tier starts and leaves running (stores, releases, grace timers): `drain`
    /// waits for them all. (A lease's extender is the lease's: it ends when the work does.)
    let background = BackgroundWork()
    /// The leases this node holds: while their work runs, then until their entry is stored.
    let held = HeldLeases()
    let counters: Counters
    /// Lease length, waits and negative entries for work shared across nodes.
    public let leases: LeaseSettings
    /// Wakes this node's waiters when another node finishes an entry.
    let done: DoneChannel
    /// Purges other nodes announced, waiting to run here.
    let announced = AnnouncedPurges()
    let logger: Logger
    /// The time of day entries' lifetimes are counted from.
    let clock: WallClock
    /// With a shared secret, every value and negative entry is sealed, and one that is not is
    /// refused (`EntrySeal`).
    let seal: EntrySeal?

    /// The largest original kept when nothing says otherwise (`--shared-max-entry`); variants are
    /// always kept.
    public static let defaultMaxEntryBytes = 8 << 20

    /// A tier on `client`; metrics go to `metrics` (swift-metrics' default when nil).
    public init(
        client: RedisClient, maxEntryBytes: Int = RedisTier.defaultMaxEntryBytes, staleFor: Double = 86_400,
        leases: LeaseSettings = LeaseSettings(),
        metrics: (any MetricsFactory)? = nil, logger: Logger = Logger(label: "pipelinehost.shared"),
        clock: WallClock = .system, seal: EntrySeal? = nil
    ) {
        self.clock = clock
        self.seal = seal
        self.client = client
        self.leases = leases
        done = DoneChannel(client: client)
        self.maxEntryBytes = maxEntryBytes
        self.staleFor = staleFor
        counters = Counters(factory: metrics ?? MetricsSystem.factory) { [client] in client.breakerOpenings }
        self.logger = logger
    }

    deinit { done.stop() }

    /// Done-channel messages this node has received (each wakes its waiters for one entry).
    public var doneMessages: Int { done.messagesReceived }

    /// Hits, misses and errors so far.
    public var stats: SharedTierStats { counters.stats }

    public func keeps(_ point: CachePoint) -> Bool { point.memory || point.disk }

    public func read(_ key: StageKey, at point: CachePoint) async -> CacheRead {
        let (redisKey, name) = Self.names(key)
        let reply: RedisClient.Reply
        do {
            reply = try await client.command([Array("GET".utf8), Array(redisKey.utf8)])
        } catch {
            counters.error(error)
            logger.debug("shared tier read failed: \(error)")
            return .miss
        }
        guard case .string(let stored) = reply else {
            if case .error(let text) = reply { counters.error(RedisClient.Failure(description: text)) }
            counters.add(\.misses)
            return .miss
        }
        guard let value = unsealed(stored, key: redisKey),
            let decoded = DiskEntryFormat.decode(ImageBytes(copying: value), name: name)
        else {
            counters.add(\.misses)
            return .corrupt
        }
        counters.add(\.hits)
        return .hit(decoded.entry)
    }

    public func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        let (redisKey, name) = Self.names(key)
        guard point.layer == .variant || entry.image.bytes.count <= maxEntryBytes,
            let header = try? DiskEntryFormat.header(
                entry, key: key.description, name: name, layer: point.layer, source: key.source)
        else {
            releaseIfAwaited(redisKey)
            return
        }
        let value = sealed(header + entry.image.bytes.array, key: redisKey)
        let milliseconds = Self.lifetime(of: entry, staleFor: staleFor, at: clock.now)
        background.run { [self] in
            do throws(RedisClient.Failure) {
                let reply = try await client.command([
                    Array("SET".utf8), Array(redisKey.utf8), value,
                    Array("PX".utf8), Array(String(milliseconds).utf8),
                ])
                if case .error(let text) = reply { counters.error(RedisClient.Failure(description: text)) }
                // The source's index, which a purge empties: it lives as long as its longest entry.
                let index = Self.sourceIndexKey(SourcePurge.digest(key.source))
                _ = try await client.command("EVAL", Self.addToIndex, "1", index, redisKey, String(milliseconds))
            } catch {
                counters.error(error)
                logger.debug("shared tier store failed: \(error)")
            }
            // Released before the store counts as done, so `drain` also waits for the release.
            if let token = held.stored(redisKey) {
                await release(LeaseKeys(redisKey), token: token)
            }
        }
    }

    /// A value as stored: sealed when there is a secret.
    func sealed(_ value: [UInt8], key redisKey: String) -> [UInt8] {
        seal.map { $0.seal(value, key: redisKey) } ?? value
    }

    /// A stored value, unsealed; nil when there is a secret and the value is not sealed with it.
    func unsealed(_ stored: [UInt8], key redisKey: String) -> [UInt8]? {
        guard let seal else { return stored }
        return seal.open(stored, key: redisKey)
    }

    /// Releases a successful lease once its entry is stored, or after a short grace when no
    /// store comes (the origin said no-store, or a later step of every request failed).
    /// A lease a purge revoked is not released again: it may be another's by now.
    func releaseWhenStored(_ keys: LeaseKeys, token: String) {
        guard held.awaitStore(token) else { return }
        let grace = leases.lease
        // A drain cuts the grace short: the lease is released at once.
        background.run(untilDrain: true) { [self] in
            try? await Task.sleep(for: grace)
            if held.take(token) != nil { await release(keys, token: token) }
        }
    }

    private func releaseIfAwaited(_ valueKey: String) {
        guard let token = held.stored(valueKey) else { return }
        background.run { [self] in await release(LeaseKeys(valueKey), token: token) }
    }

    /// Returns once every store and release this tier started has finished; leases still
    /// waiting for their entry's store are released now rather than after their grace.
    public func drain() async { await background.drain() }

    /// The Redis key and the entry's name: both from SHA-256 of the step key.
    static func names(_ key: StageKey) -> (redis: String, name: String) {
        let digest = SHA256.hash(data: Array(key.description.utf8)).hexDigits
        return (LeaseKeys.valuePrefix + digest + "}", digest)
    }

    /// How long Redis keeps an entry, in milliseconds: while it is fresh at `now`, then
    /// `staleFor` seconds more as the last good image; at least a second.
    static func lifetime(of entry: CacheEntry, staleFor: Double, at now: Double) -> Int {
        let seconds = (entry.expiresAt - now) + staleFor
        guard seconds.isFinite else { return seconds > 0 ? Int(Int32.max) : 1000 }
        return max(1000, Int(min(seconds * 1000, Double(Int32.max))))
    }
}

/// What the shared tier has done.
public struct SharedTierStats: Sendable, Equatable {
    public var hits = 0
    public var misses = 0
    public var errors = 0
    public var breakerOpened = 0
    /// Leases this node took and computed; waited for (another node led); took over after the
    /// holder's lease expired.
    public var leasesWon = 0
    public var leasesWaited = 0
    public var leasesTakenOver = 0
    /// Failures answered from another node's negative entry.
    public var negativeHits = 0
    /// Purge messages on the done channel not acted on: unsealed (with a shared secret), too
    /// old, malformed, too large, or past the queue of purges waiting.
    public var purgeMessagesDropped = 0
}

/// The tier's counters, kept for `stats` and sent to swift-metrics.
final class Counters: Sendable {
    private let values = Locked(SharedTierStats())
    private let metrics: [String: Counter]
    /// How many times the client's breakers have opened.
    private let openings: @Sendable () -> Int
    /// Openings of the breaker already counted into the metric.
    private let openingsCounted = Locked(0)

    init(factory: any MetricsFactory, openings: @escaping @Sendable () -> Int) {
        self.openings = openings
        let names = [
            "shared_hits", "shared_misses", "redis_errors", "leases_won", "leases_waited", "leases_taken_over",
            "negative_hits", "breaker_open", "purge_messages_dropped",
        ]
        metrics = Dictionary(
            uniqueKeysWithValues: names.map { ($0, Counter(label: "pipelinehost_\($0)_total", factory: factory)) })
    }

    func add(_ field: WritableKeyPath<SharedTierStats, Int>) {
        values.withLock { $0[keyPath: field] += 1 }
        metrics[Self.name(of: field)]?.increment()
    }

    /// The metric each field counts into.
    static func name(of field: WritableKeyPath<SharedTierStats, Int>) -> String {
        switch field {
        case \.hits: "shared_hits"
        case \.misses: "shared_misses"
        case \.leasesWon: "leases_won"
        case \.leasesWaited: "leases_waited"
        case \.leasesTakenOver: "leases_taken_over"
        case \.negativeHits: "negative_hits"
        case \.breakerOpened: "breaker_open"
        case \.purgeMessagesDropped: "purge_messages_dropped"
        default: "redis_errors"
        }
    }

    /// A failed call; one the breaker refused sent nothing, and is not an error of Redis'.
    func error(_ failure: RedisClient.Failure) {
        if !failure.breakerOpen { add(\.errors) }
        let opened = openings()
        let newly = openingsCounted.withLock { counted -> Int in
            defer { counted = max(counted, opened) }
            return max(0, opened - counted)
        }
        if newly > 0 { metrics["breaker_open"]?.increment(by: Int64(newly)) }
    }

    var stats: SharedTierStats {
        var stats = values.withLock { $0 }
        stats.breakerOpened = openings()
        return stats
    }
}
