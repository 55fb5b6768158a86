#if OTLPExporter
    import Foundation
    import Logging
    import OTel
    import PipelineHostCommandLine
    import ServiceLifecycle

    /// swift-otel's OTLP/HTTP exporter for traces only: logs stay on standard error and metrics on
    /// serve's /metrics. swift-otel reads the OTEL_* environment itself, after `TraceSettings` has
    /// checked it; the service name defaults to pipelinehost rather than unknown_service, and the
    /// traces endpoint is the one `TraceSettings` made (swift-otel would append the signal's path
    /// after a query).
    struct OTLPTraceExporter: TraceExporter {
        func bootstrap(_ settings: TraceSettings) throws -> any Service {
            var configuration = OTel.Configuration.default
            configuration.serviceName = settings.serviceName
            configuration.traces.enabled = true
            configuration.metrics.enabled = false
            configuration.logs.enabled = false
            configuration.traces.otlpExporter.protocol =
                settings.exportProtocol == "http/json" ? .httpJSON : .httpProtobuf
            configuration.diagnosticLogLevel = .error
            var environment = ProcessInfo.processInfo.environment
            environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = settings.endpoint
            return try OTel.bootstrap(configuration: configuration, environment: environment)
        }

        var loggingMetadata: Logger.MetadataProvider? { OTel.makeLoggingMetadataProvider() }
    }
#endif
