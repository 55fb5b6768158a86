import ArgumentParser
import PipelineHost

/// What profiles may read beyond themselves, for every command that loads a profile file. The
/// operator decides; a profile cannot widen it (see `EnvironmentAccess`).
struct ProfileAccessOptions: ParsableArguments {
    @Option(
        name: .customLong("allow-env"),
        help: ArgumentHelp(
            "Let profiles name this environment variable (repeat for several). Variables named PIPELINEHOST_SECRET_* "
                + "are readable without it; the service's own keys, salts and Redis settings never are.",
            valueName: "name"))
    var allowEnv: [String] = []

    /// Sets the process's policy; call it before loading a profile file.
    func apply() throws {
        do {
            try EnvironmentAccess.allow(allowEnv)
        } catch {
            throw usageError("\(error.message)")
        }
    }
}
