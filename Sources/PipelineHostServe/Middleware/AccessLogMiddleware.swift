import Hummingbird
import Logging
import PipelineHost

/// One access log line per request, whatever answered it: method, path (the source redacted),
/// status, bytes, milliseconds, and the cache result. The handler notes the path and the cache
/// result in the request's context (`AccessNote`); what no handler noted logs as "-".
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let log: Logger

    /// The status the access log gives a request whose client left before the answer (nginx's).
    static let clientClosed = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            write(request, context, status: response.status, bytes: response.headers[.contentLength], since: started)
            return response
        } catch {
            // Hummingbird renders the failure after this; its status and size are the failure's own.
            let failure = error as? ServeFailure
            write(
                request, context, status: (error as? any HTTPResponseError)?.status ?? .internalServerError,
                bytes: failure.map { String($0.body.utf8.count) }, since: started)
            throw error
        }
    }

    private func write(
        _ request: Request, _ context: Context, status: HTTPResponse.Status, bytes: String?,
        since started: ContinuousClock.Instant
    ) {
        guard log.logLevel <= .info else { return }
        let ms = (ContinuousClock.now - started).milliseconds
        let (_, path, cache) = context.access.noted
        let line =
            "\(request.method) \(Redactor.escapingControls(path)) \(status.code) \(bytes ?? "0")B \(Self.format(ms))ms \(cache)"
        log.info("\(line)")
    }

    static func format(_ ms: Double) -> String {
        let tenths = Int((ms * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// What a handler tells the access log and the metrics about its request: the endpoint, the
/// path to log and the cache result. A reference in the request's context, since a context
/// reaches handlers by value and the log line is written after they return.
final class AccessNote: Sendable {
    /// The route that answered, the `endpoint` label of the HTTP metrics.
    enum Endpoint: String, Sendable {
        case health, ready, metrics, prefetch, purge, image, info
        /// No route: a 404 or 405 from `NotFoundMiddleware`.
        case none

        /// The route's template, as a server span names it (`GET /{signature}/{profile}/{source}`).
        var route: String? {
            switch self {
            case .health: "/health"
            case .ready: "/ready"
            case .metrics: "/metrics"
            case .prefetch: "/prefetch"
            case .purge: "/purge/{signature}/{source}"
            case .image: "/{signature}/{profile}/{source}"
            case .info: "/info/{signature}/{profile}/{source}"
            case .none: nil
            }
        }

        /// The `endpoint` label of the HTTP metrics: /info is an image request there.
        var metricsLabel: String { self == .info ? Endpoint.image.rawValue : rawValue }
    }

    private let state = Locked((endpoint: Endpoint.none, path: "-", cache: "-"))
    private let profileNoted = Locked<String?>(nil)

    var noted: (endpoint: Endpoint, path: String, cache: String) { state.withLock { $0 } }
    /// The profile the request ran, once its path was checked.
    var profile: String? { profileNoted.withLock { $0 } }

    func note(endpoint: Endpoint, path: String, cache: String = "-") {
        state.withLock { $0 = (endpoint, path, cache) }
    }

    func note(profile: String) {
        profileNoted.withLock { $0 = profile }
    }
}
