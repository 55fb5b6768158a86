import Foundation
import TestSupport
import Testing

/// `--param` on run and sign, and `check`'s view of a profile's options.
@Suite("pipelinehost run/sign --param and check's options, as a subprocess", .needs(.pixels, .process))
struct ParamCLITests {
    static let profile = """
        profile "resize" {
          params     { w = { 100, 300, 600, default = 300 }, q = { 60, 80, default = 80 } },
          fetch      {},
          decode     {},
          downsample { size = param "w" },
          encode     { format = "jpeg", quality = param "q" },
        }
        """

    @Test("--param chooses a value, its absence the default; a value outside the set or an unknown option exits 2")
    func run() async throws {
        let directory = try TemporaryDirectory()
        let profile = try directory.write("resize.lua", Array(Self.profile.utf8))
        let photo = Fixtures.path("examples/sample.jpg")
        let chosen = try await CLIProcess.run([
            "run", profile, photo, "--param", "w=600", "--param", "q=60", "-o", directory.file("a.jpg"),
        ])
        #expect(chosen.status == 0)
        #expect(Fixtures.info(try Fixtures.read(directory.file("a.jpg")))?.width == 600)
        let plain = try await CLIProcess.run(["run", profile, photo, "-o", directory.file("b.jpg")])
        #expect(plain.status == 0)
        #expect(Fixtures.info(try Fixtures.read(directory.file("b.jpg")))?.width == 300)

        let outside = try await CLIProcess.run([
            "run", profile, photo, "--param", "w=700", "-o", directory.file("c.jpg"),
        ])
        #expect(outside.status == 2)
        #expect(outside.stderr == "error: --param: w:700 is not allowed; w takes 100, 300, 600\n")
        let unknown = try await CLIProcess.run([
            "run", profile, photo, "--param", "width=700", "-o", directory.file("c.jpg"),
        ])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no option of that name") && unknown.stderr.contains("q, w"))
        let malformed = try await CLIProcess.run(["run", profile, photo, "--param", "w", "-o", directory.file("c.jpg")])
        #expect(malformed.status == 2)
        #expect(!FileManager.default.fileExists(atPath: directory.file("c.jpg")))
    }

    @Test("check lists each option with its values, default and stage, and the variants per source")
    func check() async throws {
        let directory = try TemporaryDirectory()
        let profile = try directory.write("resize.lua", Array(Self.profile.utf8))
        let check = try await CLIProcess.run(["check", profile])
        #expect(check.status == 0)
        #expect(check.stdout.contains("  param q: 60, 80 (default 80) -> encode.quality\n"))
        #expect(check.stdout.contains("  param w: 100, 300, 600 (default 300) -> downsample.size\n"))
        #expect(check.stdout.contains("  6 variants of each source\n"))
    }

    @Test("sign --param puts the option segments in the signed path")
    func sign() async throws {
        let environment = [
            "PIPELINEHOST_KEY": "a1c6eb10355a7fa4c9ee1338fd82a7ccf116405b84a9cef3183d6287acd1f61b",
            "PIPELINEHOST_SALT": "0f0e",
        ]
        let signed = try await CLIProcess.run(
            ["sign", "resize", "https://example.com/a.jpg", "--param", "w=600", "--param", "q=60"],
            environment: environment)
        #expect(signed.status == 0)
        let path = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.contains("/resize/w:600/q:60/"))
    }

    @Test(
        "sign signs only what serve reads back: a value, a profile name or an option outside the file's params is exit 2"
    )
    func signRefusesWhatServeWouldReadOtherwise() async throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("resize.lua", Array(Self.profile.utf8))
        let environment = [
            "PIPELINEHOST_KEY": "a1c6eb10355a7fa4c9ee1338fd82a7ccf116405b84a9cef3183d6287acd1f61b",
            "PIPELINEHOST_SALT": "0f0e",
        ]
        let source = "https://example.com/a.jpg"
        let refusals: [(arguments: [String], says: String)] = [
            (["sign", "resize", source, "--param", "w=600/plain/https://evil.test/b.jpg%23"], "option w: value"),
            (["sign", "web/plain/https:%2F%2Fevil.test%2Fb.jpg%23", source], "profile name"),
            (["sign", "..", source], "profile name"),
            (
                ["sign", "resize", source, "--param", "w=700", "--file", file],
                "w:700 is not allowed; w takes 100, 300, 600"
            ),
            (["sign", "resize", source, "--param", "width=600", "--file", file], "unknown option"),
            (["sign", "other", source, "--file", file], "has no profile \"other\""),
            (["sign", "resize+info", source, "--file", file], "has no profile \"resize+info\""),
        ]
        for refusal in refusals {
            let outcome = try await CLIProcess.run(refusal.arguments, environment: environment)
            #expect(outcome.status == 2, "\(refusal.arguments)")
            #expect(outcome.stdout.isEmpty)
            #expect(
                outcome.stderr.contains("error: not signed: ") && outcome.stderr.contains(refusal.says),
                "\(outcome.stderr)")
        }
        let signed = try await CLIProcess.run(
            ["sign", "resize", source, "--param", "w=600", "--file", file], environment: environment)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stdout.contains("/resize/w:600/"))
    }
}
