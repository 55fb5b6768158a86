import CCurl
import PipelineHost
import PipelineHostTransfer

/// Registers `fetch`: http, https, file:// URLs and plain paths through libcurl.
public enum FetchPlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "fetch",
                summary: "Download the source's bytes with libcurl (http, https, file:// or a local path). "
                    + "Connections are reused; a non-2xx status is an error; connect errors, 5xx and 429 are retried "
                    + "with backoff. Reads ETag, Last-Modified, Cache-Control and Expires for the cache, and "
                    + "revalidates a stale cached copy with a conditional request.",
                input: .source, output: .encoded,
                capabilities: StageCapabilities(
                    publicServiceDefaults: [
                        FetchParameters().blockPrivate.name: true.written,
                        FetchParameters().schemes.name: ["http", "https"].written,
                    ],
                    allowedHostsParameter: FetchParameters().allowHosts.name),
                parameters: FetchParameters.specs,
                make: { FetchStage(options: try FetchOptions($0), retry: RetryPolicy($0)) }))
    }
}

/// fetch's parameters (`ParameterList`); FetchOptions reads them typed.
struct FetchParameters: ParameterList {
    let timeout = Parameter<Double>(
        "timeout", .number(0.1...600), default: 30,
        doc: "seconds the whole transfer may take")
    let connectTimeout = Parameter<Double>(
        "connect_timeout", .number(0.1...120), default: 10,
        doc: "seconds to establish the connection")
    let lowSpeedLimit = Parameter<Int>(
        "low_speed_limit", .integer(0...1_000_000_000), default: 1000,
        doc: "bytes per second; slower than this for low_speed_time is a timeout (0: off)")
    let lowSpeedTime = Parameter<Double>(
        "low_speed_time", .number(1...600), default: 15,
        doc: "seconds a transfer may stay under low_speed_limit")
    let maxBytes = Parameter<Int>(
        "max_bytes", .integer(1...4_000_000_000), default: 50_000_000,
        doc: "largest body accepted; the transfer stops as soon as it passes this")
    let maxHeaderBytes = Parameter<Int>(
        "max_header_bytes", .integer(1024...16_000_000), default: 131_072,
        doc: "largest header block of one response; more stops the transfer")
    let maxRedirects = Parameter<Int>(
        "max_redirects", .integer(0...10), default: 5,
        doc: "redirects followed before giving up; each target gets the same checks")
    let schemes = Parameter<[String]>(
        "schemes", .stringList, default: ["http", "https", "file"],
        doc:
            "URL schemes allowed, from http, https, file (plain paths need file) and s3 (s3://BUCKET/KEY, signed with the AWS_* environment); redirects never go to file"
    )
    let blockPrivate = Parameter<Bool>(
        "block_private", .boolean, default: false,
        doc:
            "refuse loopback, private, link-local (cloud metadata) and reserved addresses, checked on the address connected to, for every redirect too"
    )
    let allowHosts = Parameter<[String]>(
        "allow_hosts", .stringList, default: [],
        doc: "hosts the source and every redirect may name (serve sets --allow-source-host here); empty: any host")
    let allowLoopback = Parameter<Bool>(
        "allow_loopback", .boolean, default: false,
        doc: "with block_private: still allow 127.0.0.0/8 and ::1 (a local image server)")
    let retries = Parameter<Int>(
        "retries", .integer(0...10), default: 2,
        doc: "extra attempts after a connect error, a dropped connection, 5xx or 429; never after other 4xx")
    let retryDelay = Parameter<Double>(
        "retry_delay", .number(0...60), default: 0.5,
        doc: "seconds before the first retry; doubles each time, with jitter")
    let retryMaxDelay = Parameter<Double>(
        "retry_max_delay", .number(0...600), default: 10,
        doc: "longest wait between attempts; a longer Retry-After is not waited for")
    let userAgent = Parameter<String>(
        "user_agent", .string, default: "pipelinehost/0.1 (libcurl)",
        doc: "User-Agent header sent with http(s) requests")
}

extension FetchOptions {
    /// The options a profile's fetch parameters give; the retry policy is FetchStage's own.
    init(_ parameters: StageParameters) throws(ParameterError) {
        let schemes = parameters[\FetchParameters.schemes].map { $0.lowercased() }
        for scheme in schemes where !FetchURL.schemes.contains(scheme) {
            throw ParameterError("schemes: '\(scheme)' is not supported; choose from http, https, file, s3")
        }
        guard !schemes.isEmpty else { throw ParameterError("schemes: allow at least one of http, https, file, s3") }
        let allowHosts = Set(parameters[\FetchParameters.allowHosts].map { $0.lowercased() })
        for host in allowHosts where host.isEmpty || host.contains(",") {
            throw ParameterError("allow_hosts: '\(host)' is not a host name")
        }
        self.init(
            timeout: parameters[\FetchParameters.timeout], connectTimeout: parameters[\FetchParameters.connectTimeout],
            lowSpeedLimit: parameters[\FetchParameters.lowSpeedLimit],
            lowSpeedTime: parameters[\FetchParameters.lowSpeedTime], maxBytes: parameters[\FetchParameters.maxBytes],
            maxHeaderBytes: parameters[\FetchParameters.maxHeaderBytes],
            maxRedirects: parameters[\FetchParameters.maxRedirects], schemes: Set(schemes),
            blockPrivate: parameters[\FetchParameters.blockPrivate],
            allowLoopback: parameters[\FetchParameters.allowLoopback], allowHosts: allowHosts,
            userAgent: parameters[\FetchParameters.userAgent])
    }
}

extension RetryPolicy {
    /// The retry policy a profile's fetch parameters give.
    init(_ parameters: StageParameters) {
        self.init(
            retries: parameters[\FetchParameters.retries], delay: parameters[\FetchParameters.retryDelay],
            maxDelay: parameters[\FetchParameters.retryMaxDelay])
    }
}

struct FetchStage: Stage {
    let options: FetchOptions
    let retry: RetryPolicy

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard case .source(let source) = input else { throw PipelineError(.stageFailed, "fetch: expected a source") }
        let request = try FetchURL.request(for: source.signedLocation(), allowing: options.schemes)
        let host = request.bucket ?? request.url.host
        if !options.allowHosts.isEmpty, !options.allowHosts.contains(host ?? "") {
            let what = request.bucket == nil ? "host" : "bucket"
            throw PipelineError(.blocked, "the source's \(what) \(host ?? "(none)") is not in allow_hosts")
        }
        var transfer = request
        transfer.validators = source.validators
        // An S3 request is signed as it is sent: it carries nothing more.
        if transfer.signing == nil { transfer.traceHeaders = PipelineTracing.propagationHeaders() }
        let body = try await retry.run(context: context) {
            try await CurlTransfer.fetch(transfer, options: options, context: context)
        }
        return .encoded(
            EncodedImage(
                bytes: body.bytes, declaredContentType: body.contentType,
                cacheHints: body.hints, notModified: body.notModified))
    }
}

extension FetchPlugin {
    /// Why `block_private` would refuse this IP address ("loopback", "private", "link-local",
    /// ...), or nil for a public address. The same C check curl's connections go through;
    /// `package` so this package's tests can table it without making it plugin API.
    package static func blockedAddressClass(_ address: String) -> String? {
        ph_address_text_class(address).map { String(cString: $0) }
    }

    /// The URL, host and port the fetch stage would hand libcurl for `source` with the http and
    /// https schemes allowed, or the error it would refuse it with.
    package static func transferURL(_ source: String) throws(PipelineError) -> (url: String, host: String?, port: Int?)
    {
        let resolved = try FetchURL.resolve(source, allowing: ["http", "https"])
        return (resolved.url, resolved.host, resolved.port)
    }

    /// The host (lower-cased) and port libcurl's own URL parser reads in `url`, or nil when it
    /// cannot parse it. With `transferURL`, tests hold our one parse to libcurl's.
    package static func curlReading(_ url: String) -> (host: String, port: Int?)? {
        var host = [CChar](repeating: 0, count: 256)
        var port = -1
        guard ph_url_host(url, &host, host.count, &port) != 0 else { return nil }
        return (
            String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
            port < 0 ? nil : port
        )
    }
}
