import CoreMetrics
import Hummingbird
import PipelineHost

/// Counts every answer by endpoint and status (`pipelinehost_http_responses_total`) and times
/// it (`pipelinehost_http_request_duration_seconds`), into the service's own registry. The
/// endpoint is the one the route noted (`AccessNote.Endpoint`), every image path as "image" and
/// no route as "none", so the label set stays small.
struct HTTPMetricsMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let factory: any MetricsFactory
    /// Metric objects by label, made once: asking the factory per request would cost a lookup
    /// under its lock each time.
    private let made = Locked<(counters: [String: Counter], timers: [String: Timer])>(([:], [:]))

    init(factory: any MetricsFactory) { self.factory = factory }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(response.status, context, since: started)
            return response
        } catch {
            // As Hummingbird's MetricsMiddleware: the status is the failure's, and it travels on.
            record((error as? any HTTPResponseError)?.status ?? .internalServerError, context, since: started)
            throw error
        }
    }

    private func record(_ status: HTTPResponse.Status, _ context: Context, since started: ContinuousClock.Instant) {
        let endpoint = context.access.noted.endpoint.metricsLabel
        let (counter, timer) = made.withLock { made in
            let key = "\(endpoint) \(status.code)"
            let counter =
                made.counters[key]
                ?? Counter(
                    label: "pipelinehost_http_responses_total",
                    dimensions: [("endpoint", endpoint), ("status", String(status.code))], factory: factory)
            let timer =
                made.timers[endpoint]
                ?? Timer(
                    label: "pipelinehost_http_request_duration_seconds", dimensions: [("endpoint", endpoint)],
                    preferredDisplayUnit: .seconds, factory: factory)
            made.counters[key] = counter
            made.timers[endpoint] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.recordNanoseconds(Int64((ContinuousClock.now - started) / .nanoseconds(1)))
    }
}
