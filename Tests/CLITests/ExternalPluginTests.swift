import Foundation
import PipelineHost
import TestSupport
import Testing

/// examples/ExternalPlugin: a third party's own package builds a pipelinehost with its own
/// stage. scripts/test builds it and names its binary in EXTERNAL_PLUGIN_BIN; without that
/// variable (a plain `swift test`) these tests are skipped, and say so.
@Suite(
    "a plugin in a package of its own (examples/ExternalPlugin)",
    .enabled(
        if: ProcessInfo.processInfo.environment["EXTERNAL_PLUGIN_BIN"] != nil,
        "scripts/test builds the example and sets EXTERNAL_PLUGIN_BIN"),
    .needs(.pixels, .process))
struct ExternalPluginTests {
    let binary = ProcessInfo.processInfo.environment["EXTERNAL_PLUGIN_BIN"] ?? ""

    func run(_ arguments: [String]) async throws -> CLIProcess.Outcome {
        try await CLIProcess.start(arguments, executable: binary).finished(timeout: 120)
    }

    @Test("its profile runs the grayscale stage on the sample: every pixel has R = G = B")
    func grey() async throws {
        let directory = try TemporaryDirectory()
        let output = directory.file("grey.png")
        let outcome = try await run([
            "run", Fixtures.path("examples/ExternalPlugin/grayscale.lua"), Fixtures.path("examples/sample.jpg"), "-o",
            output,
        ])
        #expect(outcome.status == 0, "\(outcome.output)")
        let pixels = try #require(Fixtures.decoded(try Fixtures.read(output)))
        #expect((pixels.width, pixels.height) == (300, 200) && pixels.bands == 3)
        var coloured = 0
        for y in 0..<pixels.height {
            for x in 0..<pixels.width where Set(pixels[x, y]).count != 1 { coloured += 1 }
        }
        #expect(coloured == 0, "\(coloured) pixels are not grey")
        let colourful = try #require(Fixtures.decoded(Fixtures.quadrants(width: 8, height: 8, format: .png)))
        #expect(Set(colourful[1, 1]).count > 1, "the check can tell colour from grey")
    }

    @Test("its stages list grayscale, with its plugin and the plugin API version; the stock build's do not")
    func stages() async throws {
        let own = try await run(["stages", "--json"])
        #expect(own.status == 0)
        #expect(own.stdout.contains(#""name" : "grayscale""#) && own.stdout.contains(#""plugin" : "GrayscalePlugin""#))
        let version = PluginAPIVersion.current.description
        #expect(own.stdout.contains(#""plugin_api_version" : ""# + version + "\""))
        let stock = try await CLIProcess.run(["stages"])
        #expect(stock.status == 0 && !stock.stdout.contains("grayscale"))
        #expect(try await run(["--version"]).stdout.contains("plugin API \(version)"))
    }
}
