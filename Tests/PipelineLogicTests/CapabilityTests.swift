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
                        ParameterSpec("container", .choice(["png", "webp", "auto"]), default: .string("png"), doc: ""),
                        ParameterSpec("size", .integer(1...1000), default: .integer(1), doc: ""),
                    ],
                    make: { _ in Poster() }))
        }
    }

    /// A writer whose animations go in `motion`: "auto" there, or left out beside a
    /// `container` of "auto", is negotiated too.
    enum ReelPlugin: PipelinePlugin {
        static func register(in registry: inout StageRegistry) throws {
            try registry.register(
                StageDefinition(
                    name: "reel", summary: "Pass the bytes on.", input: .encoded, output: .encoded,
                    capabilities: StageCapabilities(
                        formatParameter: "container",
                        animation: .writesFrames(formatParameter: "motion", animates: { $0["motion"] != nil })),
                    parameters: [
                        ParameterSpec("container", .choice(["png", "auto"]), default: .string("png"), doc: ""),
                        ParameterSpec("motion", .choice(["gif", "webp", "auto"]), doc: ""),
                    ],
                    make: { _ in PosterPlugin.Poster() }))
        }
    }

    func profiles(_ lua: String) throws -> ProfileSet {
        try ProfileLoader(
            registry: FakeStages.registry(origin: FakeOrigin(), extra: [PosterPlugin.self, ReelPlugin.self])
        )
        .load(code: Array(lua.utf8), name: "capabilities.lua")
    }

    @Test("\"auto\" in a declared format parameter is negotiated per request; a written format is not")
    func negotiated() throws {
        let set = try profiles(
            """
            profile "a" { fetch {}, decode {}, encode {}, poster { container = "auto" } }
            profile "b" { fetch {}, decode {}, encode {}, poster { container = "png" } }
            profile "c" { fetch {}, decode {}, encode {} }
            """)
        let webp = set.request(source: "s", profile: "a", accept: "image/webp,*/*")
        #expect(webp.request.overrides == ["poster": ["container": .string("webp")]] && webp.vary == ["Accept"])
        let plain = set.request(source: "s", profile: "a")
        #expect(plain.request.overrides == ["poster": ["container": .string("jpeg")]], "no Accept header: jpeg")
        #expect(set.request(source: "s", profile: "b", accept: "image/webp") == set.request(source: "s", profile: "b"))
        #expect(set.request(source: "s", profile: "b", accept: "image/webp").vary.isEmpty)
        let c = set.request(source: "s", profile: "c", accept: "image/webp")
        #expect(c.request.overrides.isEmpty && c.vary.isEmpty, "the fake encode declares no format parameter")
    }

    @Test("one precedence: an option that chooses the format wins over Accept; left at auto, Accept decides")
    func precedence() throws {
        let set = try profiles(
            """
            profile "d" {
              params { f = { "auto", "png", "webp", default = "auto" }, w = { 100, 200, default = 100, hint = "Width" } },
              fetch {}, decode {}, encode {}, poster { container = param "f", size = param "w" } }
            """)
        let profile = try #require(set["d"])
        let chosen = try profile.resolve([("f", "png")], header: { $0 == "Sec-CH-Width" ? "150" : nil })
        let built = set.request(
            source: "s", profile: "d", choices: chosen.overrides, hints: chosen.hints, accept: "image/webp")
        #expect(
            built.request.overrides["poster"] == ["container": .string("png"), "size": .integer(200)],
            "the URL's own format wins")
        #expect(built.vary == ["Sec-CH-Width", "Width"], "Accept chose nothing, so nothing varies by it")

        let auto = try profile.resolve([("f", "auto")])
        let negotiated = set.request(source: "s", profile: "d", choices: auto.overrides, accept: "image/webp")
        #expect(negotiated.request.overrides["poster"] == ["container": .string("webp")])
        #expect(negotiated.vary.first == "Accept")

    }
}

extension CapabilityTests {
    @Test("an animation's format is negotiated where written auto, or left out beside an auto format: webp, else gif")
    func animationNegotiated() throws {
        let set = try profiles(
            """
            profile "a" { fetch {}, decode {}, encode {}, reel { container = "auto" } }
            profile "b" { fetch {}, decode {}, encode {}, reel { motion = "auto" } }
            profile "c" { fetch {}, decode {}, encode {}, reel { container = "auto", motion = "gif" } }
            """)
        let a = set.request(source: "s", profile: "a", accept: "image/webp,*/*")
        #expect(a.request.overrides == ["reel": ["container": .string("webp"), "motion": .string("webp")]])
        #expect(a.vary == ["Accept"])
        let b = set.request(source: "s", profile: "b", accept: "image/png")
        #expect(b.request.overrides == ["reel": ["motion": .string("gif")]] && b.vary == ["Accept"])
        let c = set.request(source: "s", profile: "c", accept: "image/webp")
        #expect(c.request.overrides == ["reel": ["container": .string("webp")]], "a written motion stays")
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
