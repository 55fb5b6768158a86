import PipelineHost
import Synchronization
import TestSupport
import Testing
import VipsPlugin

/// The copy `findingRegions` hands a finder plugin (the faces plugin's detector), seen through a
/// plugin of the test's own that records it.
@Suite("region finding: the copy a finder looks at", .needs(.pixels))
struct RegionFindingTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// Registers `probe_copy`, a finder that finds nothing and keeps what it was shown.
    enum ProbePlugin: PipelinePlugin {
        static let seen = Mutex<[String: FinderPixels]>([:])

        static func register(in registry: inout StageRegistry) throws {
            try registry.register(
                StageDefinition(
                    name: "probe_copy", summary: "Keeps the copy a finder is shown.", input: .image, output: .image,
                    capabilities: StageCapabilities(finds: "probes"), parameters: [],
                    make: { _ in ProbeStage() }))
        }

        struct ProbeStage: Stage {
            func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
                let source = context.source
                return try await input.findingRegions("probe_copy", finder: "probe", area: 512 * 512, in: context) {
                    pixels in
                    ProbePlugin.seen.withLock { $0[source] = pixels }
                    return []
                }
            }
        }
    }

    func run(_ stages: String, on path: String) async throws -> PipelineResult {
        let profiles = try TestPipeline.load(
            #"profile "p" { fetch {}, decode {}, \#(stages), encode { format = "png" } }"#, name: "probe.lua",
            extra: [ProbePlugin.self])
        return try await Pipeline(profiles: profiles).image(for: ImageRequest(source: path, profile: "p"))
    }

    @Test(
        "a 2560x1600 JPEG is looked at in its quarter scale (640x400, 8 px short of the copy asked), which downsample then resizes from, as it would alone"
    )
    func quarterScale() async throws {
        let photo = try #require(Fixtures.resized(Fixtures.sample, width: 2560, height: 1600))
        let path = try directory.write("wide.jpg", Fixtures.encoded(photo))
        let found = try await run("probe_copy {}, downsample { size = 400, fit = \"cover\" }", on: path)
        let seen = try #require(ProbePlugin.seen.withLock { $0[path] })
        // 512 x 512 pixels in a 1.6:1 copy is 648 x 405: the 1/2 scale (1280 x 800) would cover
        // it, at four times the pixels to decode and resize.
        #expect(seen.size == PixelSize(width: 640, height: 400))
        let alone = try await run("downsample { size = 400, fit = \"cover\" }", on: path)
        #expect(firstDifference(found.bytes, alone.bytes) == nil, "with probe_copy against alone")
    }

    @Test(
        "a JPEG's embedded profile (Display P3) is not applied to the copy: its stored colours are what a finder sees")
    func storedColours() async throws {
        let plain = try directory.write(
            "plain.png", Fixtures.painted(width: 1600, height: 1000) { _, _ in [200, 60, 40] })
        let bytes = try #require(
            try await ImageFiles.converted(
                plain, to: "p3.jpg", in: directory, operation: ["icc_export", "--output-profile", "p3"]))
        let path = try directory.write("p3-source.jpg", bytes)
        _ = try await run("probe_copy {}", on: path)
        let seen = try #require(ProbePlugin.seen.withLock { $0[path] })
        let stored = try #require(Fixtures.decoded(bytes))
        let centre = (seen.height / 2 * seen.width + seen.width / 2) * 4
        let shown = Array(seen.rgba[centre..<centre + 3])
        let kept = stored[stored.width / 2, stored.height / 2]
        #expect(Fixtures.deltaE(shown, kept) <= 2, "the copy shows \(shown); the file stores \(kept)")
        #expect(Fixtures.deltaE(kept, [200, 60, 40]) > 3, "the fixture's P3 values differ from its sRGB colour")
    }
}
