import CoreMetrics
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PipelineHost
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `pipelinehost serve` as a value: the Hummingbird application over one shared pipeline, with
/// SIGHUP reloading the profiles and SIGTERM/SIGINT draining (stop accepting, finish requests up
/// to the drain timeout, write the disk cache, return).
public struct ServeApplication: Sendable {
    let state: ServeState
    let logger: Logger

    /// Loads the profiles (`load` is called again on every reload) and builds the service. A
    /// file that does not load, or settings that cannot serve, throw here.
    public init(
        settings: ServeSettings, logger: Logger = Logger(label: "pipelinehost.serve"),
        load: @escaping @Sendable () throws -> ProfileSet
    ) throws {
        if let problem = settings.problem { throw ServeStartError(description: problem) }
        let registry = PrometheusCollectorRegistry()
        var configuration = settings.pipeline
        configuration.metrics = PrometheusMetricsFactory(registry: registry)
        if configuration.cache.mode != .off {
            for makeTier in [settings.sharedTier, settings.objectStore].compactMap({ $0 }) {
                configuration.cache.additionalTiers.append(makeTier(configuration.metrics, logger))
            }
        }
        let slot = try PipelineSlot(
            configuration: configuration, allowedHosts: settings.allowedSourceHosts,
            logger: logger, load: load)
        state = ServeState(
            settings: settings, slot: slot, registry: registry,
            accessLog: Logger(label: "pipelinehost.access"))
        self.logger = logger
    }

    /// The Hummingbird application; `onListening` gets the port once the socket is bound.
    /// SIGHUP is trapped before it returns, so a reload signal sent once the service listens is
    /// never the default action (which ends the process).
    public func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async
        -> some ApplicationProtocol
    {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        return Application(
            router: ServeRouter.make(state: state),
            server: .http1(
                headTimeout: TimeAmount(state.settings.headTimeout),
                idleTimeout: TimeAmount(state.settings.idleTimeout),
                sendTimeout: TimeAmount(state.settings.sendTimeout),
                sendTimeouts: Counter(
                    label: "pipelinehost_http_send_timeouts_total",
                    factory: PrometheusMetricsFactory(registry: state.registry)),
                minimumSendRate: state.settings.minimumSendRate,
                slowSends: Counter(
                    label: "pipelinehost_http_slow_sends_total",
                    factory: PrometheusMetricsFactory(registry: state.registry)),
                slots: state.connections,
                handlers: [ClientGoneHandler()]),
            configuration: ApplicationConfiguration(
                address: .hostname(state.settings.host, port: state.settings.port), serverName: "pipelinehost",
                availableConnectionsDelegate: state.connections.delegate),
            services: [ReloadOnHangup(slot: state.slot, hangups: hangups)],
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, then drains and returns. `services` run beside it, start
    /// first and stop last: a trace exporter among them sends the drained requests' spans.
    public func run(
        alongside services: [any Service] = [], onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        var configuration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) } + [
                .init(service: await application(onListening: onListening)),
                // Shut down first (services stop in reverse order): /ready turns 503 at once.
                .init(service: DrainFlag(state: state, logger: logger), successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = state.settings.drainTimeout
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch is CancellationError {
            logger.warning("drain timeout passed: requests still running were cancelled")
        }
        await drainCache()
    }

    /// Writes what the pipeline still holds for the disk cache.
    public func drainCache() async {
        await state.slot.now.pipeline.flushCache()
    }

    /// Loads the profile file again, as SIGHUP does; returns the error text if it did not load.
    public func reload() async -> String? { await state.slot.reload() }

    /// The shared pipeline's counters.
    public func stats() async -> PipelineStats { await state.slot.now.pipeline.stats() }
}

/// Why serve did not start.
public struct ServeStartError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Reloads the profile file on every SIGHUP.
struct ReloadOnHangup: Service {
    let slot: PipelineSlot
    let hangups: UnixSignalsSequence

    func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            await slot.reload()
        }
    }
}

/// Marks the service as draining when graceful shutdown starts.
struct DrainFlag: Service {
    let state: ServeState
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        state.startDraining()
        logger.info(
            "draining: /ready answers 503; requests in progress finish within --drain-timeout (\(state.settings.drainTimeout))"
        )
    }
}
