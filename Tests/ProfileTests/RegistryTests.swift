import PipelineHost
import Testing
import TestSupport

/// A third-party plugin, written the way docs would tell someone to.
enum TintPlugin: PipelinePlugin {
    struct Tint: Stage {
        let strength: Double
        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue { input }
    }

    static func register(in registry: inout StageRegistry) throws {
        try registry.register(StageDefinition(
            name: "tint", summary: "test stage", input: .image, output: .image,
            parameters: [ParameterSpec("strength", .number(0...1), default: .number(0.5), doc: "how much")],
            make: { Tint(strength: $0.number("strength")!) }))
    }
}

@Suite("Registering plugins")
struct RegistryTests {
    @Test("a plugin's stage is callable from Lua with its parameters checked")
    func pluginStage() throws {
        let registry = try StageRegistry(plugins: TestPipeline.plugins + [TintPlugin.self])
        let loader = ProfileLoader(registry: registry)
        let set = try loader.load(code: Array(#"profile "p" { fetch {}, decode {}, tint { strength = 0.2 }, encode {} }"#.utf8), name: "p.lua")
        #expect(set["p"]!.stages[2].parameters.number("strength") == 0.2)

        let error = #expect(throws: ProfileError.self) {
            try loader.load(code: Array("profile \"p\" {\n fetch {}, decode {},\n tint { strenght = 2 }, encode {} }".utf8), name: "p.lua")
        }
        #expect(error?.description == "p.lua:3: tint: unknown parameter 'strenght' (did you mean 'strength'?)")
    }

    @Test("two stages with one name are an error at start-up")
    func duplicate() throws {
        #expect(throws: StageRegistry.DuplicateStage.self) {
            try StageRegistry(plugins: [TintPlugin.self, TintPlugin.self])
        }
    }
}
