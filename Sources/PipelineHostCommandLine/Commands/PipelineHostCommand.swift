import ArgumentParser
import Foundation
import Glibc
import PipelineHost

/// The command line as a library: a package builds its own `pipelinehost` executable with its
/// own plugins next to the built-in ones, and gets every subcommand.
///
///     @main enum Entry {
///         static func main() async {
///             await PipelineHostCommand.main(plugins: [GrayscalePlugin.self] + .builtin)
///         }
///     }
public enum PipelineHostCommand {
    /// Registers `plugins`, then parses the process's arguments and runs the subcommand. A
    /// registry that cannot be built (two plugins register one stage name, or a plugin is for
    /// another plugin API version) is an error at start-up, exit code 2.
    ///
    /// `traceExporter` exports the spans of `run` and `serve` when the OTEL_* environment
    /// names an endpoint (docs/SERVE.md, "Tracing"); without one, nothing is exported.
    public static func main(plugins: [any PipelinePlugin.Type], traceExporter: (any TraceExporter)? = nil) async {
        activePlugins.withLock { $0 = plugins }
        activeTraceExporter.withLock { $0 = traceExporter }
        do {
            _ = try makeRegistry()
        } catch {
            Glibc.exit(usageError("\(error)").rawValue)
        }
        await RootCommand.runMappingUsageErrors()
    }

    /// "0.1.0 (plugin API 1.1)": what `--version` prints.
    public static let version = "0.1.0 (plugin API \(PluginAPIVersion.current))"
}

struct RootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipelinehost",
        abstract: "An image pipeline driven by Lua profiles: fetch, decode, resize, crop, sharpen, blur, encode.",
        discussion: """
            A profile file names chains of stages. Run sources through one:

              pipelinehost run examples/thumbnail.lua https://example.com/a.jpg -o a.jpg
              pipelinehost run examples/blurred-background.lua photo.jpg --output-dir out/
              pipelinehost info examples/thumbnail.lua photo.jpg  # size, EXIF, BlurHash, ThumbHash
              pipelinehost check examples/subsonic.lua    # validate, show parameters
              pipelinehost stages                         # every stage, its parameters
              pipelinehost cache stats                    # what the disk cache holds
              pipelinehost serve examples/thumbnail.lua   # the profiles over HTTP

            Exit codes: 0 all sources succeeded, 1 some failed (the rest are written), \
            2 usage or profile error.
            """,
        version: PipelineHostCommand.version,
        // Every command names itself (commandName): otherwise ArgumentParser derives the name with
        // String(describing:), a search of every conformance in the binary, at each start.
        subcommands: [Run.self, Info.self, Check.self, Stages.self, CacheCommand.self, Serve.self, Sign.self])

    /// Parses and runs; argument errors exit with 2, like profile errors, instead of
    /// ArgumentParser's 64.
    static func runMappingUsageErrors() async {
        var environmentOptions = EnvironmentOptions(arguments: [], variables: [:])
        do {
            environmentOptions = try EnvironmentOptions.apply(
                to: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            var command = try parseAsRoot(environmentOptions.arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                printError(environmentOptions.hinted(fullMessage(for: error)))
                Glibc.exit(ExitCode.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}

extension ExitCode {
    static let someFailed = ExitCode(1)
    static let usage = ExitCode(2)
    /// Stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report a Ctrl-C).
    static let interrupted = ExitCode(130)
}

extension String {
    /// Pads with spaces to `width` characters (without Foundation's NSString bridge).
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
