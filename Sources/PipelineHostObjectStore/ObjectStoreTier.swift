import CoreMetrics
import Crypto
import Logging
import PipelineHost
import PipelineHostTransfer

/// A durable cache tier in an S3 bucket (or MinIO, R2, Ceph), after memory, disk and Redis and
/// before the origin: what a profile keeps on disk (originals and variants) is also written here,
/// in the background, so a node with an empty disk finds it and fills its disk from it.
///
/// - Keys are `PREFIX/<SHA-256 of the source key>/<SHA-256 of the step key>`: one listing of a
///   source's folder finds every entry it has (purge), and no source or credential reaches a key.
/// - A value is the disk cache's self-checking format (content type, stored time, freshness,
///   ETag, the key redacted), sealed with `PIPELINEHOST_SHARED_SECRET` when that is set. A value
///   that fails its checksum or seal is corrupt: counted, and the work runs.
/// - The store never fails a request: a failed or slow call is a miss, stores are dropped when
///   more than `maxQueuedStores` wait or their values would pass `maxQueuedBytes` (a hung store
///   keeps every queued value until its timeout), and a circuit breaker stops calling a store
///   that is down.
/// - Nothing expires here by itself: a bucket lifecycle rule on the prefix bounds its size.
public final class ObjectStoreTier: PurgeableTier {
    public let name = "store"
    let client: S3Client
    /// "" or a folder, ending in "/".
    let prefix: String
    let seal: EntrySeal?
    let breaker: CircuitBreaker
    let maxEntryBytes: Int
    let maxQueuedStores: Int
    let maxQueuedBytes: Int
    /// The bytes of the values queued or being written now.
    private let queuedBytes = Locked(0)
    private let background = BackgroundWork()
    private let counters: ObjectStoreCounters
    private let logger: Logger

    /// A tier in `location`'s bucket and prefix, reached with `configuration`.
    public init(
        location: ObjectStoreLocation, configuration: S3Configuration, timeout: Double = ObjectStoreTier.defaultTimeout,
        maxEntryBytes: Int = 64 << 20, maxQueuedStores: Int = 256,
        maxQueuedBytes: Int = ObjectStoreTier.defaultQueuedBytes, breaker: CircuitBreaker = CircuitBreaker(),
        seal: EntrySeal? = nil, metrics: (any MetricsFactory)? = nil,
        logger: Logger = Logger(label: "pipelinehost.store")
    ) {
        // An entry's bytes plus its header (metadata with the key, a seal): a long key's
        // metadata passes a few KB, so leave room enough that the largest entry still reads.
        client = S3Client(
            configuration: configuration, bucket: location.bucket, timeout: timeout, maxBytes: maxEntryBytes + (1 << 20)
        )
        prefix = location.prefix.isEmpty ? "" : location.prefix + "/"
        self.seal = seal
        self.breaker = breaker
        self.maxEntryBytes = maxEntryBytes
        self.maxQueuedStores = maxQueuedStores
        self.maxQueuedBytes = maxQueuedBytes
        counters = ObjectStoreCounters(factory: metrics ?? MetricsSystem.factory)
        self.logger = logger
    }

    /// Seconds each call may take when nothing says otherwise (`--store-timeout`): a slow store
    /// costs a miss, and two calls stay well inside a request's 30 s.
    public static let defaultTimeout: Double = 2

    /// The values waiting to be written may take 256 MiB, or an eighth of the process's memory
    /// limit if that is less (`MemoryLimit`): 32 MiB in a 256 MiB container.
    public static var defaultQueuedBytes: Int { min(256 << 20, MemoryLimit.detected.bytes / 8) }

    /// The bytes of the values queued or being written now.
    public var queuedValueBytes: Int { queuedBytes.withLock { $0 } }

    /// Hits, misses, errors and stores so far.
    public var stats: ObjectStoreStats { counters.stats }

    public func keeps(_ point: CachePoint) -> Bool { point.disk }

    /// The folder of a source's entries, and an entry's object key in it.
    func folder(ofSource source: String) -> String { prefix + SourcePurge.digest(source) + "/" }
    func objectKey(_ key: StageKey) -> (object: String, name: String) {
        let name = Self.digest(key.description)
        return (folder(ofSource: key.source) + name, name)
    }

    static func digest(_ text: String) -> String { SHA256.hash(data: Array(text.utf8)).hexDigits }

    public func read(_ key: StageKey, at point: CachePoint) async -> CacheRead {
        guard breaker.allowsCall() else { return .miss }
        let (object, name) = objectKey(key)
        let response: S3Client.Response
        do {
            response = try await client.get(object)
        } catch {
            failed("read", error)
            return .miss
        }
        if response.status == 404 {
            breaker.succeeded()
            counters.add(.misses)
            return .miss
        }
        if let failure = response.failure {
            failed("read", failure)
            return .miss
        }
        breaker.succeeded()
        guard let value = unsealed(response.bytes.array, key: object),
            let decoded = DiskEntryFormat.decode(ImageBytes(copying: value), name: name)
        else {
            counters.add(.corrupt)
            return .corrupt
        }
        counters.add(.hits)
        return .hit(decoded.entry)
    }

    public func store(_ entry: CacheEntry, for key: StageKey, at point: CachePoint) {
        let (object, name) = objectKey(key)
        guard entry.image.bytes.count <= maxEntryBytes,
            let header = try? DiskEntryFormat.header(
                entry, key: key.description, name: name, layer: point.layer, source: key.source)
        else { return }
        // The value's size before it is made: a dropped store copies nothing.
        let size = header.count + entry.image.bytes.count
        let room = queuedBytes.withLock { queued in
            guard queued + size <= maxQueuedBytes else { return false }
            queued += size
            return true
        }
        guard room, background.count < maxQueuedStores else {
            if room { queuedBytes.withLock { $0 -= size } }
            counters.add(.dropped)
            return
        }
        let value = sealed(header + entry.image.bytes.array, key: object)
        background.run { [self] in
            defer { queuedBytes.withLock { $0 -= size } }
            guard breaker.allowsCall() else {
                counters.add(.dropped)
                return
            }
            do throws(PipelineError) {
                try await client.put(object, bytes: value)
                breaker.succeeded()
                counters.add(.stores)
            } catch {
                failed("store", error)
            }
        }
    }

    /// Waits for every store started so far.
    public func drain() async { await background.drain() }

    /// Deletes every entry of the purged sources (every profile's and option's, originals and
    /// variants): lists each source's folder and deletes what it holds. Returns how many. The
    /// store announces nothing; the shared tier's channel does.
    public func purge(_ purge: SourcePurge) async throws(PipelineError) -> Int {
        var removed = 0
        for digest in purge.digests.sorted() {
            let keys = try await client.list(prefix: prefix + digest + "/")
            for key in keys { try await client.delete(key) }
            removed += keys.count
        }
        return removed
    }

    private func sealed(_ value: [UInt8], key: String) -> [UInt8] { seal.map { $0.seal(value, key: key) } ?? value }

    private func unsealed(_ stored: [UInt8], key: String) -> [UInt8]? {
        guard let seal else { return stored }
        return seal.open(stored, key: key)
    }

    private func failed(_ what: String, _ error: PipelineError) {
        breaker.failed()
        counters.add(.errors)
        logger.debug("object store \(what) failed: \(error.reason)")
    }
}

/// What the object-store tier has done.
public struct ObjectStoreStats: Sendable, Equatable {
    public var hits = 0
    public var misses = 0
    public var errors = 0
    public var corrupt = 0
    public var stores = 0
    /// Stores not made: the queue was full or the breaker open.
    public var dropped = 0
}

/// The tier's counters, kept for `stats` and sent to swift-metrics as
/// `pipelinehost_store_<field>_total`.
final class ObjectStoreCounters: Sendable {
    enum Field: String, CaseIterable {
        case hits, misses, errors, corrupt, stores, dropped

        var path: WritableKeyPath<ObjectStoreStats, Int> {
            switch self {
            case .hits: \.hits
            case .misses: \.misses
            case .errors: \.errors
            case .corrupt: \.corrupt
            case .stores: \.stores
            case .dropped: \.dropped
            }
        }
    }

    private let values = Locked(ObjectStoreStats())
    private let metrics: [Field: Counter]

    init(factory: any MetricsFactory) {
        metrics = Dictionary(
            uniqueKeysWithValues: Field.allCases.map {
                ($0, Counter(label: "pipelinehost_store_\($0.rawValue)_total", factory: factory))
            })
    }

    func add(_ field: Field) {
        values.withLock { $0[keyPath: field.path] += 1 }
        metrics[field]?.increment()
    }

    var stats: ObjectStoreStats { values.withLock { $0 } }
}

extension ObjectStoreTier {
    /// Why the process's AWS environment does not say how to reach S3 (no credentials, a bad
    /// region or endpoint), or nil when it does. Check it at start, before making a tier with it.
    public static var environmentProblem: String? {
        if case .failure(let problem) = S3Configuration.current { return problem.description }
        return nil
    }

    /// A tier reached with the process's AWS environment (`S3Configuration.current`); nil when
    /// `environmentProblem` says why not.
    public convenience init?(
        location: ObjectStoreLocation, timeout: Double = ObjectStoreTier.defaultTimeout, seal: EntrySeal?,
        metrics: (any MetricsFactory)?,
        logger: Logger
    ) {
        guard case .success(let configuration) = S3Configuration.current else { return nil }
        self.init(
            location: location, configuration: configuration, timeout: timeout, seal: seal, metrics: metrics,
            logger: logger)
    }
}
