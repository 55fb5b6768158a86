import Hummingbird
import PipelineHost
import Prometheus

/// The service's routes, one per kind of request: the operational endpoints, `/info/**` for an
/// image's description and `**` for images. A path no route serves reaches
/// `NotFoundMiddleware`, which answers it. Handlers throw `ServeFailure`, which Hummingbird
/// renders; the middlewares see the failure's status and rethrow it.
enum ServeRouter {
    static func make(state: ServeState) -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        router.add(middleware: ServerSpanMiddleware())
        router.add(middleware: AccessLogMiddleware(log: state.accessLog))
        router.add(middleware: HTTPMetricsMiddleware(factory: PrometheusMetricsFactory(registry: state.registry)))
        router.add(middleware: TransferCodingMiddleware())
        router.add(middleware: SpareConnectionMiddleware(limit: state.settings.maxConnections))
        router.add(middleware: NotFoundMiddleware())
        let images = ImageRoute(state: state)
        for method: HTTPRequest.Method in [.get, .head] {
            router.on("/health", method: method) { _, context in
                context.access.note(endpoint: .health, path: "/health")
                return text("ok\n")
            }
            router.on("/ready", method: method) { _, context in
                context.access.note(endpoint: .ready, path: "/ready")
                return ready(state)
            }
            // The image routes read the path raw from the request, percent escapes intact,
            // since the signature covers the path as sent.
            router.on("/info/**", method: method) { request, context in try await images.info(request, context: context)
            }
            router.on("**", method: method) { request, context in try await images.image(request, context: context) }
        }
        router.get("/metrics") { _, context in
            context.access.note(endpoint: .metrics, path: "/metrics")
            return metrics(state)
        }
        router.post("/purge/**") { request, context in
            context.access.note(endpoint: .purge, path: "/purge/…")
            return try await PurgeRoute(state: state).respond(to: request)
        }
        router.post("/prefetch") { request, context in
            context.access.note(endpoint: .prefetch, path: "/prefetch")
            return try await PrefetchRoute(state: state).respond(to: request)
        }
        return router
    }

    /// 503 while draining or while the queue is over 90% full, so a balancer looks elsewhere.
    private static func ready(_ state: ServeState) -> Response {
        if state.isDraining { return text("draining\n", status: .serviceUnavailable) }
        if state.gate.isNearlyFull {
            return text("busy: \(state.gate.count) of \(state.gate.limit) queued\n", status: .serviceUnavailable)
        }
        return text("ready\n")
    }

    private static func metrics(_ state: ServeState) -> Response {
        exportProcessCounters(state)
        var text: [UInt8] = []
        state.registry.emit(into: &text)
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
    }

    /// Plugins' process-wide counters (`ProcessCounters`) become Prometheus counters,
    /// `pipelinehost_<name>_total`, grown by what they counted since the last scrape.
    private static func exportProcessCounters(_ state: ServeState) {
        for (counter, value) in ProcessCounters.snapshot() {
            let grown = state.exportedProcessCounts.withLock { exported in
                defer { exported[counter.name] = max(value, exported[counter.name, default: 0]) }
                return value - exported[counter.name, default: 0]
            }
            let exported = state.registry.makeCounter(
                descriptor: .init(
                    namespace: "pipelinehost", metricName: counter.name, unitName: "total", helpText: counter.help))
            if grown > 0 { exported.increment(by: Int64(grown)) }
        }
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = String(body.utf8.count)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
