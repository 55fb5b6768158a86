import BuiltinPlugins
import GrayscalePlugin
import PipelineHostCommandLine

/// This package's `pipelinehost`: every subcommand (run, check, stages, cache, serve, sign) with
/// the grayscale stage next to the built-in ones.
@main
enum Entry {
    static func main() async {
        await PipelineHostCommand.main(plugins: [GrayscalePlugin.self] + .builtin)
    }
}
