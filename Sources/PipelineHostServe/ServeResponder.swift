import Hummingbird
import Logging
import PipelineHost

/// Every request of the service: the operational endpoints, then image paths. One responder
/// instead of a router: image paths must be read raw (percent-encoding intact, for the
/// signature), and the access log needs each answer's cache result.
struct ServeResponder: HTTPResponder {
    typealias Context = ServeContext
    let state: ServeState

    /// The status the access log gives a request whose client left before the answer (nginx's).
    static let clientClosed = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response, logPath: String, cache: String
        switch (request.method, request.uri.path) {
        case (.get, "/health"), (.head, "/health"):
            (response, logPath, cache) = (Self.text("ok\n"), "/health", "-")
        case (.get, "/ready"), (.head, "/ready"):
            (response, logPath, cache) = (ready(), "/ready", "-")
        case (.get, "/metrics"):
            (response, logPath, cache) = (metrics(), "/metrics", "-")
        case (.post, "/prefetch"):
            (response, logPath, cache) = (await PrefetchHandler(state: state).respond(to: request), "/prefetch", "-")
        case (.get, _), (.head, _):
            (response, logPath, cache) = await ImageHandler(state: state).respond(to: request, connection: context.channel)
        default:
            var headers: HTTPFields = [:]
            headers[.allow] = "GET, HEAD"
            var failure = ServeFailure(.methodNotAllowed, "method_not_allowed", "\(request.method) is not served here; use GET or HEAD")
            failure.details = [:]
            (response, logPath, cache) = (failure.response(method: request.method, extra: headers), "-", "-")
        }
        log(request, path: logPath, response: response, cache: cache, since: started)
        return response
    }

    /// 503 while draining or while the queue is over 90% full, so a balancer looks elsewhere.
    private func ready() -> Response {
        if state.isDraining { return Self.text("draining\n", status: .serviceUnavailable) }
        if state.gate.isNearlyFull { return Self.text("busy: \(state.gate.count) of \(state.gate.limit) queued\n", status: .serviceUnavailable) }
        return Self.text("ready\n")
    }

    private func metrics() -> Response {
        var text: [UInt8] = []
        state.registry.emit(into: &text)
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
    }

    /// One line per request: method, path (source redacted), status, bytes, ms, cache result.
    private func log(_ request: Request, path: String, response: Response, cache: String, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let bytes = response.headers[.contentLength] ?? "0"
        let line = "\(request.method) \(Redactor.escapingControls(path)) \(response.status.code) \(bytes)B \(Self.format(ms))ms \(cache)"
        state.accessLog.info("\(line)")
    }

    static func format(_ ms: Double) -> String {
        let tenths = Int((ms * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = String(body.utf8.count)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
