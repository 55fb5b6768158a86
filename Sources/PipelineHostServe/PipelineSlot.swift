import Logging
import PipelineHost

/// The one shared `Pipeline` every request goes through, and the profiles it runs. A reload
/// (SIGHUP) loads the file again and, only if it loads, puts a new pipeline in the slot:
/// requests already running finish on the old one, whose disk writes are then drained.
final class PipelineSlot: Sendable {
    struct Current: Sendable {
        let pipeline: Pipeline
        let profiles: ServedProfiles
    }

    private let current: Locked<Current>
    private let load: @Sendable () throws -> ProfileSet
    private let configuration: PipelineConfiguration
    private let allowedHosts: Set<String>
    private let logger: Logger

    /// Loads the file once; a failure here is a start-up error.
    init(
        configuration: PipelineConfiguration, allowedHosts: Set<String>, logger: Logger,
        load: @escaping @Sendable () throws -> ProfileSet
    ) throws {
        let profiles = try ServedProfiles(load(), allowedHosts: allowedHosts)
        current = Locked(
            Current(
                pipeline: Pipeline(profiles: profiles.set, configuration: configuration, logger: logger),
                profiles: profiles))
        self.load = load
        self.configuration = configuration
        self.allowedHosts = allowedHosts
        self.logger = logger
    }

    var now: Current { current.withLock { $0 } }

    /// Loads the file again. A broken file keeps the old profiles; the error (with file:line)
    /// is logged and returned.
    @discardableResult
    func reload() async -> String? {
        let (load, allowedHosts) = (self.load, self.allowedHosts)
        let loaded: ServedProfiles
        do {
            loaded = try await BlockingExecutor.shared.run { try ServedProfiles(load(), allowedHosts: allowedHosts) }
        } catch {
            let message = ProfileError.clipped("\(error)")
            logger.error("reload failed, still serving the previous profiles: \(message)")
            return message
        }
        let fresh = Current(
            pipeline: Pipeline(profiles: loaded.set, configuration: configuration, logger: logger), profiles: loaded)
        let old = current.withLock { slot in
            defer { slot = fresh }
            return slot.pipeline
        }
        logger.info("reloaded \(loaded.set.file): profiles \(loaded.set.names.joined(separator: ", "))")
        await old.flushCache()
        return nil
    }
}
