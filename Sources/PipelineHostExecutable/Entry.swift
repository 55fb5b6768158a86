import BuiltinPlugins
import PipelineHost
import PipelineHostCommandLine

#if Faces
    import FacesPlugin
#endif

// new-plugin: imports

/// The stock `pipelinehost`: the command line with the built-in plugins. A third party's
/// package builds its own the same way, with its plugins added (examples/ExternalPlugin).
///
/// The entry point is a type of its own because a `static func main()` on an ArgumentParser
/// command would compete with the `main()`s ArgumentParser provides, and which one wins is not
/// the same in debug and release builds.
@main
enum Entry {
    /// The plugins this executable registers: the built-in ones, and any `scripts/new-plugin`
    /// adds to this repository.
    static var plugins: [any PipelinePlugin.Type] {
        .builtin + faces + [
            // new-plugin: list
        ]
    }

    /// The face detector with the trait Faces; without it, a profile that asks for faces is told
    /// how to build it.
    static var faces: [any PipelinePlugin.Type] {
        #if Faces
            [FacesPlugin.self]
        #else
            [FacesMissing.self]
        #endif
    }

    /// swift-otel's OTLP/HTTP exporter when built with the OTLPExporter trait (scripts/run and
    /// scripts/test do), else none.
    static var traceExporter: (any TraceExporter)? {
        #if OTLPExporter
            OTLPTraceExporter()
        #else
            nil
        #endif
    }

    static func main() async { await PipelineHostCommand.main(plugins: plugins, traceExporter: traceExporter) }
}
