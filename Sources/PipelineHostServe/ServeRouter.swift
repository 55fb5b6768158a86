import Hummingbird
import PipelineHost
import Prometheus

/// The service's routes: the operational endpoints, and one route for every image path (GET
/// and HEAD on anything else). The image route reads the path raw from the request, percent
/// escapes intact, since the signature covers the path as sent.
enum ServeRouter {
    static func make(state: ServeState) -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        router.add(middleware: AccessLogMiddleware(log: state.accessLog))
        router.add(middleware: HTTPMetricsMiddleware(factory: PrometheusMetricsFactory(registry: state.registry)))
        router.add(middleware: TransferCodingMiddleware())
        router.add(middleware: MethodNotAllowedMiddleware())
        // The image route: every other path, the root included (it answers not_found).
        let image = { @Sendable (request: Request, context: ServeContext) async -> Response in
            await ImageHandler(state: state).respond(to: request, context: context)
        }
        for method: HTTPRequest.Method in [.get, .head] {
            router.on("/health", method: method) { _, context in
                context.access.note(path: "/health")
                return text("ok\n")
            }
            router.on("/ready", method: method) { _, context in
                context.access.note(path: "/ready")
                return ready(state)
            }
            router.on("/", method: method, use: image)
            router.on("**", method: method, use: image)
            // Paths below the operational ones are image paths too: the router's trie does not
            // fall back from "/health" to "**" for "/health/x". So is /prefetch by GET.
            for operational in ["health", "ready", "metrics", "prefetch"] {
                router.on(RouterPath("\(operational)/**"), method: method, use: image)
            }
            router.on("/prefetch", method: method, use: image)
        }
        router.head("/metrics", use: image)
        router.get("/metrics") { _, context in
            context.access.note(path: "/metrics")
            return metrics(state)
        }
        router.post("/prefetch") { request, context in
            context.access.note(path: "/prefetch")
            return await PrefetchHandler(state: state).respond(to: request)
        }
        return router
    }

    /// `next`'s answer, a thrown failure rendered as the answer it stands for, so that a
    /// middleware logs and counts the status the client gets.
    static func rendered(_ request: Request, _ context: ServeContext,
                         _ next: (Request, ServeContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        }
    }

    /// 503 while draining or while the queue is over 90% full, so a balancer looks elsewhere.
    private static func ready(_ state: ServeState) -> Response {
        if state.isDraining { return text("draining\n", status: .serviceUnavailable) }
        if state.gate.isNearlyFull { return text("busy: \(state.gate.count) of \(state.gate.limit) queued\n", status: .serviceUnavailable) }
        return text("ready\n")
    }

    private static func metrics(_ state: ServeState) -> Response {
        var text: [UInt8] = []
        state.registry.emit(into: &text)
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = String(body.utf8.count)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// What no route serves (a method other than GET and HEAD, or POST anywhere but /prefetch) is
/// 405 with the methods that are, in serve's JSON, rather than the router's bare 404.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = ServeContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            var failure = ServeFailure(.methodNotAllowed, "method_not_allowed", "\(request.method) is not served here; use GET or HEAD")
            failure.headers[.allow] = "GET, HEAD"
            throw failure
        }
    }
}
