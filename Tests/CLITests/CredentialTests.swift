import Foundation
import TestSupport
import Testing

@Suite(
    "pipelinehost: no credential is shown or stored", .needs(.pixels, .network, .process), .loopbackOrigin
)
struct CredentialTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/a.jpg", .ok(Fixtures.quadrants(width: 64, height: 48), contentType: "image/jpeg"))
    }

    /// Every secret in the URL is a distinct marker, so a leak names itself.
    let secrets = ["GOOGSIG1", "GOOGCRED2", "AUTHTOK3", "ACCESSTOK4", "JWTVAL5", "USERTOKEN6", "PROFILEKEY7"]

    var url: String {
        "http://USERTOKEN6@127.0.0.1:\(server.port)/a.jpg?X-Goog-Signature=GOOGSIG1&X-Goog-Credential=GOOGCRED2"
            + "&auth_token=AUTHTOK3&access-token=ACCESSTOK4&jwt=JWTVAL5&ticket=PROFILEKEY7&w=1"
    }

    @Test(
        "stdout, --json, --trace, --stats and the disk cache hold none, whatever normalize does",
        arguments: [
            // No normalize at all: the key is the URL as given.
            "profile \"p\" { fetch {}, cache { disk = true }, decode {}, downsample { size = 32 }, encode {}, cache { disk = true } }",
            // A normalize that drops nothing, with the profile's own secret name.
            "profile \"p\" { normalize { redact_query = { \"ticket\" } }, fetch {}, cache { disk = true }, decode {}, encode {}, cache { disk = true } }",
            // The name is another profile's in the same file: one redaction for the whole set.
            "profile \"p\" { fetch {}, cache { disk = true }, decode {}, encode {}, cache { disk = true } }\n"
                + "profile \"other\" { normalize { redact_query = { \"ticket\" } }, fetch {}, decode {}, encode {} }",
        ])
    func nowhere(_ lua: String) async throws {
        let profile = try directory.write("p.lua", Array(lua.utf8))
        let cache = directory.file("cache")
        var everything = ""
        for flags in [["--trace"], ["--json", "--stats"], ["--stats"]] {
            let run = try await CLIProcess.run(
                ["run", profile, url, "--profile", "p", "--output-dir", directory.file("out"), "--cache-dir", cache]
                    + flags)
            #expect(run.status == 0, "\(run.stderr)")
            everything += run.stdout + run.stderr
        }
        #expect(everything.contains("REDACTED"))
        let files = FileManager.default.enumerator(atPath: cache)?.compactMap { $0 as? String } ?? []
        #expect(files.contains { $0.hasPrefix("entries/") && $0.count > 70 }, "the cache stored entries")
        for file in files {
            everything += String(decoding: (try? Fixtures.read(cache + "/" + file)) ?? [], as: UTF8.self)
        }
        let shown = lua.contains("ticket") ? secrets : secrets.filter { $0 != "PROFILEKEY7" }
        for secret in shown { #expect(!everything.contains(secret), "\(secret) leaked") }
        // Even the profile's own name, unknown to the built-in patterns, never reaches a cache file.
        #expect(
            !(files.map { String(decoding: (try? Fixtures.read(cache + "/" + $0)) ?? [], as: UTF8.self) }.joined()
                .contains("PROFILEKEY7")))
    }

    @Test("control bytes in a source are escaped on the terminal")
    func controlBytes() async throws {
        let source = directory.file("evil\u{1B}]0;owned\u{07}.jpg")
        let run = try await CLIProcess.run([
            "run", Fixtures.path("examples/thumbnail.lua"), source, "--output-dir", directory.file("out"),
        ])
        #expect(run.status == 1)
        #expect(!run.stderr.contains("\u{1B}") && !run.stderr.contains("\u{07}"), "\(run.stderr.debugDescription)")
        #expect(run.stderr.contains("evil\\x1B]0;owned\\x07.jpg"), "\(run.stderr)")
    }
}
