import PipelineHost
import TestSupport
import Testing

/// A third-party plugin, written the way docs would tell someone to.
enum TintPlugin: PipelinePlugin {
    struct Tint: Stage {
        let strength: Double
        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue { input }
    }

    static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "tint", summary: "test stage", input: .image, output: .image,
                parameters: [ParameterSpec("strength", .number(0...1), default: .number(0.5), doc: "how much")],
                make: { Tint(strength: $0.number("strength")!) }))
    }
}

/// Another plugin that registers `tint` too.
enum OtherTintPlugin: PipelinePlugin {
    static func register(in registry: inout StageRegistry) throws { try TintPlugin.register(in: &registry) }
}

/// A plugin whose declared API version a test sets.
enum VersionedPlugin: PipelinePlugin {
    static let declared = Locked(PluginAPIVersion.current)
    static var apiVersion: PluginAPIVersion { declared.withLock { $0 } }

    static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "versioned", summary: "test stage", input: .image, output: .image,
                parameters: [], make: { _ in TintPlugin.Tint(strength: 0) }))
    }
}

@Suite("Registering plugins", .serialized)
struct RegistryTests {
    @Test("a plugin's stage is callable from Lua with its parameters checked")
    func pluginStage() throws {
        let registry = try StageRegistry(plugins: TestPipeline.plugins + [TintPlugin.self])
        let loader = ProfileLoader(registry: registry)
        let set = try loader.load(
            code: Array(#"profile "p" { fetch {}, decode {}, tint { strength = 0.2 }, encode {} }"#.utf8), name: "p.lua"
        )
        #expect(set["p"]!.stages[2].parameters.number("strength") == 0.2)

        let error = #expect(throws: ProfileError.self) {
            try loader.load(
                code: Array("profile \"p\" {\n fetch {}, decode {},\n tint { strenght = 2 }, encode {} }".utf8),
                name: "p.lua")
        }
        #expect(error?.description == "p.lua:3: tint: unknown parameter 'strenght' (did you mean 'strength'?)")
    }

    @Test("two stages with one name are an error at start-up that names both plugins")
    func duplicate() throws {
        let error = #expect(throws: StageRegistry.DuplicateStage.self) {
            try StageRegistry(plugins: [TintPlugin.self, OtherTintPlugin.self])
        }
        #expect(error?.description == "two plugins register a stage named 'tint': TintPlugin and OtherTintPlugin")
    }

    @Test(
        "a plugin for another major plugin API version, or a newer minor one, is refused; older minors run",
        arguments: [
            (PluginAPIVersion(major: PluginAPIVersion.current.major + 1, minor: 0), false),
            (PluginAPIVersion(major: PluginAPIVersion.current.major, minor: PluginAPIVersion.current.minor + 1), false),
            (PluginAPIVersion(major: PluginAPIVersion.current.major, minor: 0), true),
        ])
    func version(_ version: PluginAPIVersion, accepted: Bool) throws {
        VersionedPlugin.declared.withLock { $0 = version }
        if accepted {
            #expect(try StageRegistry(plugins: [VersionedPlugin.self]).owners["versioned"] == "VersionedPlugin")
        } else {
            let error = #expect(throws: StageRegistry.IncompatiblePlugin.self) {
                try StageRegistry(plugins: [VersionedPlugin.self])
            }
            #expect(
                error?.description.hasPrefix(
                    "plugin VersionedPlugin is written for plugin API \(version), and this pipelinehost provides \(PluginAPIVersion.current)"
                ) == true,
                "\(String(describing: error))")
        }
    }
}
