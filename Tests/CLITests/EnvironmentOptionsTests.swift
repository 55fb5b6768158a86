import Foundation
import TestSupport
import Testing

@testable import PipelineHostCommandLine

/// A container is configured by its environment: every `serve` option has a PIPELINEHOST_*
/// variable beside its flag, checked as the flag is.
@Suite("pipelinehost serve: every option from the environment too")
struct EnvironmentOptionsTests {
    @Test("each serve option has its variable, named after the flag")
    func everyOption() throws {
        let names = EnvironmentOptions.serveOptions.map(\.name)
        for expected in [
            "port", "host", "cache-dir", "memory-budget", "allow-unsigned", "allow-source-host", "min-send-rate",
        ] {
            #expect(names.contains(expected), "\(names)")
        }
        #expect(!names.contains("help") && !names.contains("version"))
        #expect(EnvironmentOptions.variable(for: "cache-dir") == "PIPELINEHOST_CACHE_DIR")
        #expect(EnvironmentOptions.variable(for: "shared-cache") == "PIPELINEHOST_REDIS")
    }

    @Test("values become flags after `serve`; a repeated option takes a comma-separated list")
    func values() throws {
        let applied = try EnvironmentOptions.apply(
            to: ["serve", "profiles.lua"],
            environment: [
                "PIPELINEHOST_PORT": "8080", "PIPELINEHOST_ALLOW_UNSIGNED": "true",
                "PIPELINEHOST_NO_ACCESS_LOG": "false", "PIPELINEHOST_ALLOW_SOURCE_HOST": "a.example, b.example",
            ])
        #expect(
            Set(applied.arguments.chunked(after: "profiles.lua"))
                == Set([
                    "--port 8080", "--allow-unsigned", "--allow-source-host a.example", "--allow-source-host b.example",
                ]))
        #expect(applied.arguments.first == "serve" && applied.arguments.last == "profiles.lua")
        #expect(applied.variables["--port"] == "PIPELINEHOST_PORT")
        #expect(applied.variables["--no-access-log"] == nil)
    }

    @Test("a flag on the command line wins over its variable; other commands ignore the environment")
    func flagWins() throws {
        let serve = try EnvironmentOptions.apply(
            to: ["serve", "p.lua", "--port=9000"], environment: ["PIPELINEHOST_PORT": "8080"])
        #expect(serve.arguments == ["serve", "p.lua", "--port=9000"])
        let run = try EnvironmentOptions.apply(
            to: ["run", "p.lua", "a.jpg"], environment: ["PIPELINEHOST_PORT": "8080"])
        #expect(run.arguments == ["run", "p.lua", "a.jpg"])
    }

    @Test("a flag's variable must say true or false")
    func badFlag() {
        #expect(throws: (any Error).self) {
            try EnvironmentOptions.apply(to: ["serve", "p.lua"], environment: ["PIPELINEHOST_REFRESH": "maybe"])
        }
    }

    @Test("an error names the variable that set the option, not a longer one")
    func hint() throws {
        let applied = try EnvironmentOptions.apply(
            to: ["serve", "p.lua"], environment: ["PIPELINEHOST_SHARED_WAIT": "x", "PIPELINEHOST_PORT": "1"])
        #expect(
            applied.hinted("Error: The value 'x' is invalid for '--shared-wait <seconds>'\nHelp: ...")
                == "Error: The value 'x' is invalid for '--shared-wait <seconds>' (set by PIPELINEHOST_SHARED_WAIT)\nHelp: ..."
        )
        #expect(applied.hinted("Error: --portal is unknown") == "Error: --portal is unknown")
    }

    @Test("a bad value from the environment exits 2 with a line naming the variable", .needs(.process))
    func refusedAtStart() async throws {
        let run = try await CLIProcess.run(
            ["serve", Fixtures.path("examples/thumbnail.lua"), "--allow-unsigned"],
            environment: ["PIPELINEHOST_MAX_QUEUE": "0"])
        #expect(run.status == 2)
        #expect(
            run.stderr.hasPrefix(
                "Error: --max-queue must be between 1 and 1000000, got 0 (set by PIPELINEHOST_MAX_QUEUE)\n"),
            "\(run.stderr)")
    }

    @Test("serve runs on its options from the environment alone", .needs(.pixels, .process, .network))
    func servesFromEnvironment() async throws {
        let origin = try LoopbackServer()
        origin.route("/a.jpg", .ok(Fixtures.sample))
        let directory = try TemporaryDirectory()
        let profile = try directory.write("serve.lua", Array(Fixtures.cachedThumbProfile.utf8))
        let service = try await ServeProcess(
            profileFile: profile,
            environment: [
                "PIPELINEHOST_ALLOW_UNSIGNED": "1", "PIPELINEHOST_CACHE_DIR": directory.file("cache"),
                "PIPELINEHOST_NO_ACCESS_LOG": "true",
            ])
        let image = try await Curl.get(service.baseURL + "/unsafe/thumb/" + base64url(origin.url("/a.jpg")))
        let outcome = try await service.stop()
        #expect(image.status == 200, "unsigned paths allowed: \(image.status) \(image.text)")
        #expect(
            FileManager.default.fileExists(atPath: directory.file("cache")),
            "the disk cache is where PIPELINEHOST_CACHE_DIR says")
        #expect(!outcome.stderr.contains("/unsafe/thumb/"), "no access log: \(outcome.stderr)")
    }
}

extension [String] {
    /// The arguments between the subcommand and `marker`, as "--flag value" pairs and lone flags.
    fileprivate func chunked(after marker: String) -> [String] {
        var chunks: [String] = []
        for argument in dropFirst().prefix(while: { $0 != marker }) {
            if argument.hasPrefix("--") { chunks.append(argument) } else { chunks[chunks.count - 1] += " " + argument }
        }
        return chunks
    }
}
