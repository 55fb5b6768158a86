import HTTPTypes
import Hummingbird
import PipelineHost
import Tracing

/// One server span per request, continuing the caller's W3C `traceparent` and `tracestate`: the
/// parent of the pipeline's spans for it. Named by the route that answered
/// (`GET /{signature}/{profile}/{source}`), with the profile, the status and the cache result as
/// attributes. Hummingbird's `TracingMiddleware` records the raw path and query, which carry the
/// source (and a source's credentials) in base64; this records the route template only. The span
/// ends when the body is written, so it covers the send. Untraced, it passes the request on.
struct ServerSpanMiddleware: RouterMiddleware {
    typealias Context = ServeContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let tracer = PipelineTracing.tracer else { return try await next(request, context) }
        var parent = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
        let span = tracer.startSpan("\(request.method.rawValue)", context: parent, ofKind: .server)
        span.attributes["http.request.method"] = request.method.rawValue
        do {
            var response = try await ServiceContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            describe(span, request, context, status: response.status)
            let ending = SpanEnding(span)
            let body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer { ending.end() }
                try await body.write(writer)
            }
            return response
        } catch {
            describe(span, request, context, status: (error as? any HTTPResponseError)?.status ?? .internalServerError)
            span.end()
            throw error
        }
    }

    private func describe(_ span: any Span, _ request: Request, _ context: Context, status: HTTPResponse.Status) {
        let noted = context.access.noted
        if let route = noted.endpoint.route {
            span.operationName = "\(request.method.rawValue) \(route)"
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = status.code
        if let profile = context.access.profile { span.attributes[SpanNames.profile] = profile }
        if noted.cache != "-" { span.attributes[SpanNames.cacheResult] = noted.cache }
        if status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }
}

/// Reads trace context from request headers.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

/// Ends a server span once its body is written, or, when the body is never written (the
/// connection went first), once the response is dropped.
final class SpanEnding: Sendable {
    private let span: Locked<(any Span)?>

    init(_ span: any Span) { self.span = Locked(span) }

    func end() {
        span.withLock { span in
            span?.end()
            span = nil
        }
    }

    deinit { end() }
}
