import ArgumentParser
import CirclePlugin
import FetchPlugin
import KeyNormalizePlugin
import PipelineHost
import PipelineProfiles
import SubsonicAuthPlugin
import VipsPlugin

extension Array where Element == any PipelinePlugin.Type {
    /// The plugins of the stock `pipelinehost`: cache, fetch, normalize, the libvips stages,
    /// subsonic_auth and circle. A package adds its own: `[MyPlugin.self] + .builtin`.
    public static var builtin: [any PipelinePlugin.Type] {
        [CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self, SubsonicAuthPlugin.self, CirclePlugin.self]
    }
}

/// The plugins this process registers, set once by `PipelineHostCommand.main(plugins:)`.
let activePlugins = Locked<[any PipelinePlugin.Type]>(.builtin)

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
        printError("error: \(error)")
        throw ExitCode.usage
    }
}

/// Loads a profile file and throws the loader's error (with file:line), for serve's start and
/// its reloads. No LoadGuard: serve's signals belong to its service group, and the sandbox's
/// own limits end a runaway script.
func loadProfileFile(_ path: String) throws -> ProfileSet {
    try ProfileLoader(registry: try makeRegistry()).load(file: path)
}
