import CoreMetrics
import Hummingbird
import PipelineHost

/// Counts every answer by endpoint and status (`pipelinehost_http_responses_total`) and times
/// it (`pipelinehost_http_request_duration_seconds`), into the service's own registry. The
/// endpoint is the route, with every image path as "image", so the label set stays small.
struct HTTPMetricsMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let factory: any MetricsFactory
    /// Metric objects by label, made once: asking the factory per request would cost a lookup
    /// under its lock each time.
    private let made = Locked<(counters: [String: Counter], timers: [String: Timer])>(([:], [:]))

    init(factory: any MetricsFactory) { self.factory = factory }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await ServeRouter.rendered(request, context, next)
        let endpoint = Self.endpoint(context.endpointPath)
        let (counter, timer) = made.withLock { made in
            let key = "\(endpoint) \(response.status.code)"
            let counter = made.counters[key] ?? Counter(
                label: "pipelinehost_http_responses_total",
                dimensions: [("endpoint", endpoint), ("status", String(response.status.code))], factory: factory)
            let timer = made.timers[endpoint] ?? Timer(
                label: "pipelinehost_http_request_duration_seconds", dimensions: [("endpoint", endpoint)],
                preferredDisplayUnit: .seconds, factory: factory)
            made.counters[key] = counter
            made.timers[endpoint] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.recordNanoseconds(Int64((ContinuousClock.now - started) / .nanoseconds(1)))
        return response
    }

    /// The route a request took: an operational endpoint, "image", or "none" (no route: 405).
    static func endpoint(_ path: String?) -> String {
        switch path {
        case "/health", "/ready", "/metrics", "/prefetch": path!.dropFirst().description
        case nil, "NotFound": "none"
        default: "image"
        }
    }
}
