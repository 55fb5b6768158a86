import CoreMetrics
import Logging
import PipelineHost

/// Makes a shared cache tier with the service's metrics backend and logger.
public typealias SharedTierFactory = @Sendable (_ metrics: (any MetricsFactory)?, _ logger: Logger) -> any CacheTier

/// How `pipelinehost serve` runs: where it listens, who may ask, and its limits.
public struct ServeSettings: Sendable {
    /// The address to listen on; 127.0.0.1 unless the service is meant to be reached from outside.
    public var host: String
    /// The port; 0 picks a free one (the start-up line says which).
    public var port: Int
    /// Signing keys; with none, `allowUnsigned` must be on.
    public var signer: URLSigner
    /// Accept "unsafe" in place of a signature.
    public var allowUnsigned: Bool
    /// Image requests admitted at once; one more gets 503 with Retry-After.
    public var maxQueue: Int
    /// How long a SIGTERM waits for requests in progress before cancelling them.
    public var drainTimeout: Duration
    /// How long a client may take to send a request head, from the connection's opening or the
    /// first byte of the request.
    public var headTimeout: Duration
    /// How long a keep-alive connection may stay idle between requests.
    public var idleTimeout: Duration
    /// How long an answer may make no progress (no write to the client finishing) before its
    /// connection is closed: nginx's `send_timeout`, for clients that never read.
    public var sendTimeout: Duration
    /// Bytes a second a client must take of an unsent answer, measured over 10 s windows in
    /// which it took some; a slower one is reset (`SlowReaderGuard`). 0: no minimum.
    public var minimumSendRate: Int
    /// Open connections at most; more wait in the kernel's backlog, and past it are refused.
    public var maxConnections: Int
    /// How long one image request may take; then it is cancelled (its transfer and pixel work
    /// stop unless another request shares them) and answered 504.
    public var requestTimeout: Duration
    /// When not empty, the only hosts sources may name (lower-case, no port).
    public var allowedSourceHosts: Set<String>
    /// Whether this libvips writes AVIF, for `format = "auto"`.
    public var canWriteAVIF: Bool
    /// Cache-Control max-age for results whose freshness nothing set.
    public var defaultMaxAge: Int
    /// Slots, cache settings and metrics of the shared pipeline.
    public var pipeline: PipelineConfiguration
    /// Makes the tier shared by many nodes (the command line's Redis tier), after memory and
    /// disk; nil for none. Serve knows no Redis: it hands the tier its own metrics backend and
    /// logger, so the tier's counters are on /metrics.
    public var sharedTier: SharedTierFactory?
    /// Makes the object-store tier, looked in after the shared one; nil for none.
    public var objectStore: SharedTierFactory?
    /// Send `Accept-CH` with the client hints a profile's options read (`params { w = { ...,
    /// hint = "Width" } }`), so browsers send them on later requests (serve --accept-ch).
    public var acceptClientHints = false

    /// Settings with the documented defaults (`ServeDefaults`): 127.0.0.1:8080, a queue of 256, a 10 s drain.
    public init(
        host: String = ServeDefaults.host, port: Int = ServeDefaults.port, signer: URLSigner,
        allowUnsigned: Bool = false,
        maxQueue: Int = ServeDefaults.maxQueue, drainTimeout: Duration = .seconds(ServeDefaults.drainSeconds),
        requestTimeout: Duration = .seconds(ServeDefaults.requestSeconds),
        headTimeout: Duration = .seconds(ServeDefaults.headSeconds),
        idleTimeout: Duration = .seconds(ServeDefaults.idleSeconds),
        sendTimeout: Duration = .seconds(ServeDefaults.sendSeconds),
        minimumSendRate: Int = ServeDefaults.minimumSendRate,
        maxConnections: Int = ServeDefaults.maxConnections,
        allowedSourceHosts: Set<String> = [],
        canWriteAVIF: Bool = false, sharedTier: SharedTierFactory? = nil, objectStore: SharedTierFactory? = nil,
        defaultMaxAge: Int = ServeDefaults.maxAge, pipeline: PipelineConfiguration = ServeDefaults.pipeline
    ) {
        self.host = host
        self.port = port
        self.signer = signer
        self.allowUnsigned = allowUnsigned
        self.maxQueue = maxQueue
        self.drainTimeout = drainTimeout
        self.requestTimeout = requestTimeout
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.sendTimeout = sendTimeout
        self.minimumSendRate = max(0, minimumSendRate)
        self.maxConnections = max(1, maxConnections)
        self.allowedSourceHosts = Set(allowedSourceHosts.map { $0.lowercased() })
        self.canWriteAVIF = canWriteAVIF
        self.sharedTier = sharedTier
        self.objectStore = objectStore
        self.defaultMaxAge = defaultMaxAge
        self.pipeline = pipeline
    }

    /// Why these settings cannot serve, if they cannot: with no key and no `allowUnsigned`,
    /// every request would be refused.
    public var problem: String? {
        guard !signer.hasKeys, !allowUnsigned else { return nil }
        return "no signing key: set PIPELINEHOST_KEY and PIPELINEHOST_SALT (hex; comma-separated pairs rotate keys), "
            + "or pass --allow-unsigned to accept /unsafe/ paths"
    }
}
