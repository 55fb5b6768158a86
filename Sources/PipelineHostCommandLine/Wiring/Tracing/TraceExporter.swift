import Logging
import PipelineHost
import ServiceLifecycle

/// What exports the spans of `run` and `serve`. The stock executable brings swift-otel's
/// OTLP/HTTP exporter (built with the OTLPExporter trait); a package that builds its own
/// `pipelinehost` may pass it too, or none.
public protocol TraceExporter: Sendable {
    /// Bootstraps the process's tracer (`InstrumentationSystem`) for `settings`, and returns
    /// the service that exports its spans until graceful shutdown, then flushes them.
    func bootstrap(_ settings: TraceSettings) throws -> any Service
    /// Log metadata of the active span (`trace_id`, `span_id`), for serve's log lines.
    var loggingMetadata: Logger.MetadataProvider? { get }
}

/// The exporter `PipelineHostCommand.main` was given, if any.
let activeTraceExporter = Locked<(any TraceExporter)?>(nil)

/// The exporter of this process, started from the environment once a command knows it runs.
/// Not started: no endpoint, or no exporter in this build (a warning says so).
struct Telemetry: Sendable {
    let service: (any Service)?
    let loggingMetadata: Logger.MetadataProvider?
    /// What is exported where, for serve's start-up line; nil when nothing is.
    var summary: String?

    /// Reads the OTEL_* environment; a value that does not read is a usage error, exit 2.
    static func start(environment: [String: String] = otelEnvironment()) throws -> Telemetry {
        let settings: TraceSettings?
        do {
            settings = try TraceSettings.from(environment: environment)
        } catch {
            throw usageError("\(error)")
        }
        guard let settings else { return Telemetry(service: nil, loggingMetadata: nil) }
        guard let exporter = activeTraceExporter.withLock({ $0 }) else {
            printError(
                "warning: an OTLP endpoint is set, but this pipelinehost has no trace exporter "
                    + "(build it with --traits OTLPExporter, as scripts/run does when OTEL_EXPORTER_OTLP_ENDPOINT is set): "
                    + "no spans are exported")
            return Telemetry(service: nil, loggingMetadata: nil)
        }
        do {
            return Telemetry(
                service: try exporter.bootstrap(settings), loggingMetadata: exporter.loggingMetadata,
                summary:
                    "traces to \(Redactor.redact(settings.endpoint)) (\(settings.exportProtocol), service \(settings.serviceName), sampler \(settings.sampler))"
            )
        } catch {
            throw usageError("the trace exporter did not start: \(error)")
        }
    }

    /// Runs the exporter beside `body`, then shuts it down, which sends every span still queued.
    func exporting<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard let service else { return try await body() }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [.init(service: service)], logger: Self.quiet))
        let running = Task { try await group.run() }
        do {
            let value = try await body()
            await finish(group, running)
            return value
        } catch {
            await finish(group, running)
            throw error
        }
    }

    private func finish(_ group: ServiceGroup, _ running: Task<Void, any Error>) async {
        await group.triggerGracefulShutdown()
        _ = await running.result
    }

    /// The process's OTEL_* variables.
    static func otelEnvironment() -> [String: String] { ProcessEnvironment.variables(withPrefix: "OTEL_") }

    /// Service lifecycle's own messages stay out of a batch's output.
    static let quiet = Logger(label: "pipelinehost.telemetry", factory: { _ in SwiftLogNoOpLogHandler() })
}
