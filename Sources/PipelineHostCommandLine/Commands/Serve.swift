import ArgumentParser
import Logging
import PipelineHost
import PipelineHostServe

#if canImport(Glibc)
    import Glibc
#endif

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the file's profiles over HTTP, with signed imgproxy-style URLs.",
        discussion: """
            Image URLs name a profile of the file and a source; nothing about processing comes \
            from the URL but the options the profile's params allow:

              GET /{signature}/{profile}/{base64url(source)}
              GET /{signature}/{profile}/plain/{percent-encoded source}
              GET /{signature}/{profile}/w:600/q:60/{base64url(source)}

            The last chooses options the profile's params declares (params { w = { 320, \
            640, 1280, default = 640 } } and downsample { width = param "w" }); anything \
            else in a segment is 400 invalid_option, naming the allowed values.

            The signature is base64url(HMAC-SHA256(key, salt + "/{profile}/...")), with key \
            and salt in hex from PIPELINEHOST_KEY and PIPELINEHOST_SALT (comma-separated \
            pairs rotate keys; new paths are signed with the first). `pipelinehost sign` \
            prints a signed path. With --allow-unsigned, "unsafe" stands in for a signature.

            Every request goes through one shared pipeline: identical requests share one \
            download and one decode, a client that disconnects cancels only its own request, \
            and X-Priority: low|normal|high orders the queues. A profile whose encode says \
            format = "auto" answers AVIF, WebP or JPEG from the Accept header.

            GET /info/{signature}/{profile}/{source}, with the image path's signature, answers \
            what `pipelinehost info` prints for the source, as JSON, cached like a variant.

            A profile with fallback { file = "missing.jpg", status = 404, max_age = 30 } answers \
            a source that is not found or not an image with that file through its stages, with \
            that status, Cache-Control: public, max-age=30 and X-Cache: fallback.

            Also: GET /health, GET /ready (503 while draining or over 90% of --max-queue), \
            GET /metrics (Prometheus), POST /prefetch (a JSON list of signed paths, run at \
            low priority). SIGHUP reloads the profile file (a broken file keeps the old \
            profiles); SIGTERM or SIGINT stops accepting, finishes requests for up to \
            --drain-timeout, writes the disk cache and exits 0.

            Every option can also come from the environment, as containers are configured: \
            PIPELINEHOST_ and the option's name in capitals, dashes as underscores \
            (PIPELINEHOST_CACHE_DIR=/var/cache/pipelinehost, PIPELINEHOST_ALLOW_UNSIGNED=true, \
            a repeated option as a comma-separated list; --shared-cache's is \
            PIPELINEHOST_REDIS). A flag on the command line wins over its variable.

            Fetch stages refuse private addresses (block_private) and non-http(s) sources \
            unless the profile sets block_private or schemes itself.

            Traces: with OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318, each request is an \
            OpenTelemetry trace (its stages, cache tiers and the work it shared), continuing \
            the caller's traceparent; OTEL_SERVICE_NAME and OTEL_TRACES_SAMPLER apply \
            (docs/SERVE.md, "Tracing").

            Example:
              export PIPELINEHOST_KEY=$(openssl rand -hex 32)
              export PIPELINEHOST_SALT=$(openssl rand -hex 16)
              pipelinehost serve examples/thumbnail.lua --port 8080 &
              curl -O "http://127.0.0.1:8080$(pipelinehost sign thumbnail URL)"
            """)

    @Argument(help: "The Lua profile file.")
    var profileFile: String

    @Option(name: .long, help: "The address to listen on.")
    var host = ServeDefaults.host

    @Option(name: .long, help: "The port to listen on (0 picks a free one; the start-up line names it).")
    var port = ServeDefaults.port

    @Flag(
        name: .customLong("allow-unsigned"), help: "Accept /unsafe/... paths without a signature (for local use only).")
    var allowUnsigned = false

    @Option(
        name: .customLong("max-queue"), help: "Image requests admitted at once; more get 503 with Retry-After at once.")
    var maxQueue = ServeDefaults.maxQueue

    @Option(
        name: .customLong("drain-timeout"),
        help: ArgumentHelp("Seconds SIGTERM waits for requests in progress.", valueName: "seconds"))
    var drainTimeout = ServeDefaults.drainSeconds

    @Option(
        name: .customLong("head-timeout"),
        help: ArgumentHelp(
            "Seconds a client may take to send a request head, from connecting (or from the first byte of a later request); "
                + "then the connection is closed.", valueName: "seconds"))
    var headTimeout = ServeDefaults.headSeconds

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "Seconds a keep-alive connection may wait for its next request.", valueName: "seconds"))
    var idleTimeout = ServeDefaults.idleSeconds

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp(
            "Open connections at most, and a few spare ones (a sixty-fourth, 4 to 64) that answer only /health, /ready "
                + "and /metrics; more wait in the listen backlog and past it are refused. Default: 4096, or three "
                + "quarters of the open-file limit (raised to its maximum at start) if that is lower.",
            valueName: "count"))
    var maxConnections: Int?

    @Option(
        name: .customLong("request-timeout"),
        help: ArgumentHelp(
            "Seconds one image request may take; then its transfer and pixel work stop (unless another request shares them) "
                + "and it is answered 504.", valueName: "seconds"))
    var requestTimeout = ServeDefaults.requestSeconds

    @Option(
        name: .customLong("allow-source-host"),
        help: ArgumentHelp("Only fetch sources on this host (repeat for several).", valueName: "host"))
    var allowSourceHosts: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Transfers at once, over all hosts. Each waits on a thread of its own, never on the threads that disk reads and "
                + "image work use; keep it several times --per-host, so slow origins on a few hosts cannot take every slot."
        ))
    var connections = ServeDefaults.transfers

    @Option(name: .customLong("per-host"), help: "Transfers at once to one host.")
    var perHost = ServeDefaults.transfersPerHost

    @Flag(name: .customLong("no-access-log"), help: "No line per request on standard error.")
    var noAccessLog = false

    @Flag(
        name: .customLong("accept-ch"),
        help: ArgumentHelp(
            "Send Accept-CH with the client hints (Sec-CH-Width, Sec-CH-DPR) a profile's options read.",
            discussion:
                "An option with hint = \"Width\" or \"DPR\" takes its value from that request header when the URL does not choose it."
        ))
    var acceptClientHints = false

    @OptionGroup(title: "Profiles")
    var access: ProfileAccessOptions

    @OptionGroup(title: "Memory")
    var memory: MemoryOptions

    @OptionGroup(title: "Cache")
    var cache: CacheOptions

    @Option(
        name: .customLong("send-timeout"),
        help: ArgumentHelp(
            "Seconds an answer may go without the client taking any of it (nginx's send_timeout); then the connection is closed.",
            discussion: "While an answer is unsent, no more requests are read from its connection.",
            valueName: "seconds"))
    var sendTimeout = ServeDefaults.sendSeconds

    @Option(
        name: .customLong("min-send-rate"),
        help: ArgumentHelp(
            "Bytes a second a client must take of an unsent answer, such as 8K; one that takes some but less over 10 s "
                + "is reset (0: no minimum).",
            discussion:
                "A client that reads a few KB a second never trips --send-timeout, and enough of them hold every connection.",
            valueName: "size"))
    var minimumSendRate = ByteCount(ServeDefaults.minimumSendRate)

    func validate() throws {
        try FlagRange.count(port, "--port", in: 0...65535)
        try FlagRange.count(maxQueue, "--max-queue", in: 1...1_000_000)
        try FlagRange.count(connections, "--connections", in: 1...10_000)
        try FlagRange.count(perHost, "--per-host", in: 1...10_000)
        if let maxConnections { try FlagRange.count(maxConnections, "--max-connections", in: 1...1_000_000) }
        try FlagRange.count(minimumSendRate.bytes, "--min-send-rate", in: 0...(1 << 30))
        _ = try timeouts()
        try cache.checkTierWaits(against: requestTimeout)
    }

    /// The time flags as durations: the drain may be 0, the others must be more.
    func timeouts() throws -> (drain: Duration, request: Duration, head: Duration, idle: Duration, send: Duration) {
        let positive = 0.001...FlagRange.maxSeconds
        return (
            try FlagRange.seconds(drainTimeout, "--drain-timeout", in: 0...FlagRange.maxSeconds),
            try FlagRange.seconds(requestTimeout, "--request-timeout", in: positive),
            try FlagRange.seconds(headTimeout, "--head-timeout", in: positive),
            try FlagRange.seconds(idleTimeout, "--idle-timeout", in: positive),
            try FlagRange.seconds(sendTimeout, "--send-timeout", in: positive)
        )
    }

    func run() async throws {
        let telemetry = try Telemetry.start()
        let accessLevel: Logger.Level = noAccessLog ? .warning : .info
        // With an exporter, each line logged inside a request carries its trace_id and span_id.
        LoggingSystem.bootstrap(
            { label, metadata in
                var handler = StreamLogHandler.standardError(label: label, metadataProvider: metadata)
                handler.logLevel = label == "pipelinehost.access" ? accessLevel : .info
                return handler
            }, metadataProvider: telemetry.loggingMetadata)
        let signer = try SigningKeys.fromEnvironment()
        try access.apply()
        try await cache.checkSharedCredentials()
        // Many requests run at once, one CPU stage per core: libvips gets one thread each.
        let cores = PipelineConfiguration.cores
        setThreadsPerOperation(1)
        let timeouts = try timeouts()
        var settings = ServeSettings(
            host: host, port: port, signer: signer, allowUnsigned: allowUnsigned, maxQueue: maxQueue,
            drainTimeout: timeouts.drain, requestTimeout: timeouts.request, headTimeout: timeouts.head,
            idleTimeout: timeouts.idle,
            sendTimeout: timeouts.send, minimumSendRate: minimumSendRate.bytes,
            maxConnections: maxConnections ?? OpenFiles.connectionLimit(),
            allowedSourceHosts: Set(allowSourceHosts),
            canWriteAVIF: pluginsCanEncode("avif"), sharedTier: try cache.sharedTierFactory(),
            objectStore: try cache.objectStoreFactory(),
            pipeline: PipelineConfiguration(
                transfers: connections, transfersPerHost: perHost, cpuStages: cores, cache: cache.settings,
                // Work that waits for memory gives up at three quarters of the request's time: a
                // 503 with Retry-After, not a 504.
                memoryBudget: memory.bytes, memoryWait: timeouts.request * 3 / 4))
        settings.acceptClientHints = acceptClientHints
        let file = profileFile
        let service: ServeApplication
        do {
            service = try ServeApplication(settings: settings) { try loadProfileFile(file) }
        } catch {
            throw usageError("\(error)")
        }
        let host = host
        let traces = telemetry.summary.map { "; " + $0 } ?? ""
        let memorySummary = memory.summary
        let detectedCores = CPULimit.detected
        let coresSummary =
            "\(detectedCores.cores) \(detectedCores.cores == 1 ? "core" : "cores") (\(detectedCores.origin))"
        try await service.run(alongside: telemetry.service.map { [$0] } ?? []) { port in
            printError(
                "pipelinehost serve: listening on http://\(host):\(port) (\(file); \(memorySummary); \(coresSummary); Ctrl-C or SIGTERM drains and stops\(traces))"
            )
        }
        printError("pipelinehost serve: stopped")
    }
}
