import ArgumentParser
import CirclePlugin
import FetchPlugin
import KeyNormalizePlugin
import PipelineHost
import PipelineProfiles
import SubsonicAuthPlugin
import VipsPlugin

/// The plugins this executable registers. To add a plugin, add its target as a dependency and
/// one line here.
var builtinPlugins: [any PipelinePlugin.Type] {
    [
        CachePlugin.self,
        FetchPlugin.self,
        KeyNormalizePlugin.self,
        VipsPlugin.self,
        SubsonicAuthPlugin.self,
        CirclePlugin.self,
        // new-plugin: list
    ]
}

/// The registry every command uses.
func makeRegistry() throws -> StageRegistry {
    try StageRegistry(plugins: builtinPlugins)
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
