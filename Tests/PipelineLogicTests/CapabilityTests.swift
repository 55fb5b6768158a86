import PipelineHost
import PipelineProfiles
import PipelineTesting
import Testing

/// A stage of any name that declares a format parameter is what "auto" formats go by, in run
/// and serve alike: hosts read capabilities, not stage names.
@Suite("Stage capabilities: a declared format parameter")
struct CapabilityTests {
    enum PosterPlugin: PipelinePlugin {
        struct Poster: Stage {
            func run(_ input: StageValue, in context: StageContext) async throws -> StageValue { input }
        }

        static func register(in registry: inout StageRegistry) throws {
            try registry.register(
                StageDefinition(
                    name: "poster", summary: "Pass the bytes on in a chosen container.", input: .encoded,
                    output: .encoded,
                    capabilities: StageCapabilities(formatParameter: "container"),
                    parameters: [
                        ParameterSpec("container", .choice(["png", "webp", "auto"]), default: .string("png"), doc: "")
                    ],
                    make: { _ in Poster() }))
        }
    }

    func profiles(_ lua: String) throws -> ProfileSet {
        try ProfileLoader(registry: FakeStages.registry(origin: FakeOrigin(), extra: [PosterPlugin.self]))
            .load(code: Array(lua.utf8), name: "capabilities.lua")
    }

    @Test("\"auto\" in a declared format parameter is overridden per request; a written format is not")
    func overrides() throws {
        let set = try profiles(
            """
            profile "a" { fetch {}, decode {}, encode {}, poster { container = "auto" } }
            profile "b" { fetch {}, decode {}, encode {}, poster { container = "png" } }
            profile "c" { fetch {}, decode {}, encode {} }
            """)
        #expect(set["a"]?.formatOverrides("webp") == ["poster": ["container": .string("webp")]])
        #expect(set["b"]?.formatOverrides("webp") == [:])
        #expect(set["c"]?.formatOverrides("webp") == [:], "the fake encode declares no format parameter")
    }
}

/// A plugin's error kinds cannot pass for the core's, and the upstream status is a typed fact.
@Suite("Error kinds and typed details")
struct ErrorKindTests {
    struct Upstream: ErrorDetails {
        let status: Int
        var jsonFields: [String: ErrorField] { ["status_seen": .integer(status)] }
        var upstreamStatus: Int? { status }
    }

    @Test("a plugin that names its kind \"timeout\" gets a kind of its own; a name read back is the core's")
    func kinds() {
        #expect(PipelineError.Kind("timeout") != .timeout)
        #expect(PipelineError.Kind("timeout").name == "plugin_timeout")
        #expect(PipelineError.Kind("output_failed").name == "output_failed", "names the core does not use stay")
        #expect(PipelineError.Kind(named: "timeout") == .timeout)
    }

    @Test("the upstream status comes from whichever layer's details carry it, under any field name")
    func upstream() {
        #expect(PipelineError(.httpStatus, "HTTP 404", details: Upstream(status: 404)).upstreamStatus == 404)
        #expect(PipelineError(.timeout, "slow").upstreamStatus == nil)
    }
}
