import PipelineHost

/// Registers `fetch`: http, https, file:// URLs and plain paths through libcurl.
public enum FetchPlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(StageDefinition(
            name: "fetch",
            summary: "Download the source's bytes with libcurl (http, https, file:// or a local path). "
                + "Connections are reused; a non-2xx status is an error. Reads ETag, Last-Modified, "
                + "Cache-Control and Expires for the cache, and revalidates a stale cached copy with a conditional request.",
            input: .source, output: .encoded,
            parameters: [
                ParameterSpec("timeout", .number(0.1...600), default: .number(30),
                              doc: "seconds the whole transfer may take"),
                ParameterSpec("connect_timeout", .number(0.1...120), default: .number(10),
                              doc: "seconds to establish the connection"),
                ParameterSpec("max_bytes", .integer(1...4_000_000_000), default: .integer(50_000_000),
                              doc: "largest body accepted; the transfer stops as soon as it passes this"),
                ParameterSpec("max_redirects", .integer(0...5), default: .integer(5),
                              doc: "redirects followed before giving up"),
                ParameterSpec("user_agent", .string, default: .string("pipelinehost/0.1 (libcurl)"),
                              doc: "User-Agent header sent with http(s) requests"),
            ],
            make: { FetchStage(options: FetchOptions($0)) }))
    }
}

struct FetchOptions: Sendable {
    var timeout: Double
    var connectTimeout: Double
    var maxBytes: Int
    var maxRedirects: Int
    var userAgent: String

    init(_ parameters: StageParameters) {
        timeout = parameters.number("timeout")!
        connectTimeout = parameters.number("connect_timeout")!
        maxBytes = parameters.integer("max_bytes")!
        maxRedirects = parameters.integer("max_redirects")!
        userAgent = parameters.string("user_agent")!
    }
}

struct FetchStage: Stage {
    let options: FetchOptions

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard case .source(let source) = input else { throw PipelineError(.stageFailed, "fetch: expected a source") }
        let url = try FetchURL.resolve(source.signedLocation())
        let body = try await CurlTransfer.fetch(url, validators: source.validators, options: options, context: context)
        return .encoded(EncodedImage(bytes: body.bytes, declaredContentType: body.contentType,
                                     cacheHints: body.hints, notModified: body.notModified))
    }
}
