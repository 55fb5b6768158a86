import ArgumentParser
import PipelineHost
import PipelineProfiles

/// The plugins this process registers, set once by `PipelineHostCommand.main(plugins:)`. The
/// command line knows no plugin by name (the stock list, `.builtin`, is in BuiltinPlugins):
/// what it needs of them goes through the plugin hooks, such as `canEncode`.
let activePlugins = Locked<[any PipelinePlugin.Type]>([CachePlugin.self])

/// Whether a registered plugin writes `format`, for `encode { format = "auto" }`.
func pluginsCanEncode(_ format: String) -> Bool { activePlugins.withLock { $0 }.canEncode(format) }

/// Tells every registered plugin how many threads one operation may use.
func setThreadsPerOperation(_ threads: Int) { activePlugins.withLock { $0 }.setThreadsPerOperation(threads) }

/// The registry every command uses.
func makeRegistry() throws -> StageRegistry {
    try StageRegistry(plugins: activePlugins.withLock { $0 })
}

/// Loads a profile file, printing the error and exiting 2 when it does not load.
func loadProfiles(_ path: String) throws -> ProfileSet {
    let loader = ProfileLoader(registry: try makeRegistry())
    let guarding = LoadGuard(file: path, limits: loader.limits)
    defer { guarding.finish() }
    do {
        return try loader.load(file: path)
    } catch {
        throw usageError("\(error)")
    }
}

/// Loads a profile file and throws the loader's error (with file:line), for serve's start and
/// its reloads. No LoadGuard: serve's signals belong to its service group, and the sandbox's
/// own limits end a runaway script.
func loadProfileFile(_ path: String) throws -> ProfileSet {
    try ProfileLoader(registry: try makeRegistry()).load(file: path)
}
