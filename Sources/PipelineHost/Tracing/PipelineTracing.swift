import Tracing

/// The pipeline's spans go to whatever tracer the process bootstrapped in swift-distributed-
/// tracing's `InstrumentationSystem`: the stock executable's OTLP exporter, or an embedding app's
/// own. With none bootstrapped, the pipeline starts no span and reads no context, so an untraced
/// process pays one check per request and nothing else.
public enum PipelineTracing {
    /// The process's tracer, or nil when none was bootstrapped.
    public static var tracer: (any Tracer)? {
        let tracer = InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    /// The trace context headers (W3C `traceparent` and `tracestate` with the stock exporter) for
    /// a call to another service on behalf of the span active in this task, so the other
    /// service's spans join this trace. Empty without a tracer or an active span. A header whose
    /// name or value could break a request line (control characters, over 512 bytes) is left out:
    /// `tracestate` comes from the caller.
    public static func propagationHeaders() -> [(name: String, value: String)] {
        guard tracer != nil, let context = ServiceContext.current else { return [] }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: HeaderInjector())
        return carrier.sorted { $0.key < $1.key }.filter { isSafeHeader($0.key, $0.value) }
            .map { (name: $0.key, value: $0.value) }
    }

    /// The context that `headers` (as `propagationHeaders` made them, in another process) carry,
    /// to link a span to the span that made them; nil when they carry none.
    public static func context(fromPropagationHeaders headers: [String: String]) -> ServiceContext? {
        guard tracer != nil, !headers.isEmpty else { return nil }
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(headers, into: &context, using: HeaderExtractor())
        return context.isEmpty ? nil : context
    }

    /// A span named `name`, a child of the span active in this task; nil without a tracer.
    static func start(_ name: String, kind: SpanKind = .internal) -> (any Span)? {
        guard let tracer else { return nil }
        return tracer.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: kind)
    }

    /// Runs one request under its span (`image`), which names its profile, its source (redacted)
    /// and where the answer came from; without a tracer, just runs it.
    static func request(
        _ request: ImageRequest, source: @autoclosure () -> String, isolation: isolated (any Actor)? = #isolation,
        _ body: () async -> Result<PipelineResult, PipelineError>
    ) async -> Result<PipelineResult, PipelineError> {
        guard let span = start(SpanNames.image) else { return await body() }
        span.attributes[SpanNames.profile] = request.profile
        span.attributes[SpanNames.source] = source()
        let outcome = await withActive(span, body)
        if case .success(let result) = outcome { span.attributes[SpanNames.cacheResult] = result.cacheTier }
        end(span, failing: outcome.failure)
        return outcome
    }

    /// `start(_:)` for a span of work on one stage, which names the stage.
    static func start(_ name: String, stage: String) -> (any Span)? {
        let span = start(name)
        span?.attributes[SpanNames.stageName] = stage
        return span
    }

    /// Runs `body` with `span` as the active span, so spans it starts are its children and calls
    /// it makes carry its context; without a span, just runs it.
    static func withActive<T>(
        _ span: (any Span)?, isolation: isolated (any Actor)? = #isolation, _ body: () async -> T
    ) async -> T {
        guard let span else { return await body() }
        return await ServiceContext.$current.withValue(span.context, operation: { await body() }, isolation: isolation)
    }

    /// Ends `span` with `error` recorded on it, when there is one.
    static func end(_ span: (any Span)?, failing error: PipelineError?) {
        guard let span else { return }
        if let error {
            span.attributes[SpanNames.errorKind] = error.kind.name
            span.setStatus(SpanStatus(code: .error, message: error.kind.name))
        }
        span.end()
    }

    private static func isSafeHeader(_ name: String, _ value: String) -> Bool {
        !name.isEmpty && value.utf8.count <= 512
            && (name + value).unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
    }
}

/// Writes trace context into a header dictionary.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

/// Reads trace context from a header dictionary.
struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}
