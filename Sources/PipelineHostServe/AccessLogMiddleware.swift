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

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await ServeRouter.rendered(request, context, next)
        guard log.logLevel <= .info else { return response }
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let bytes = response.headers[.contentLength] ?? "0"
        let (path, cache) = context.access.noted
        let line = "\(request.method) \(Redactor.escapingControls(path)) \(response.status.code) \(bytes)B \(Self.format(ms))ms \(cache)"
        log.info("\(line)")
        return response
    }

    static func format(_ ms: Double) -> String {
        let tenths = Int((ms * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// What a handler tells the access log about its request. A reference in the request's context,
/// since a context reaches handlers by value and the log line is written after they return.
final class AccessNote: Sendable {
    private let state = Locked((path: "-", cache: "-"))

    var noted: (path: String, cache: String) { state.withLock { $0 } }

    func note(path: String, cache: String = "-") {
        state.withLock { $0 = (path, cache) }
    }
}
