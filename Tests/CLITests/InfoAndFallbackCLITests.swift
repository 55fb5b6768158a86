import Foundation
import TestSupport
import Testing

/// `pipelinehost info` and `run --fallback` as a user runs them.
@Suite(
    "pipelinehost info and run --fallback, as a subprocess", .needs(.pixels, .network, .process),
    .loopbackOrigin)
struct InfoAndFallbackCLITests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory

    static let profile = """
        profile "thumb" {
          normalize  { drop_query = { "t" } },
          fetch      { timeout = 5, retries = 0, max_bytes = 5e6 },
          cache      { disk = true },
          decode     { max_pixels = 20e6 },
          downsample { size = 40, fit = "cover" },
          encode     { format = "png" },
          fallback   { file = "art/missing.png", status = 404, max_age = 60 },
        }
        """

    init() throws {
        directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("art"), withIntermediateDirectories: true)
        _ = try directory.write("art/missing.png", Fixtures.painted(width: 100, height: 80) { _, _ in [200, 30, 60] })
        server.route("/iafc/cover.jpg", .ok(Fixtures.quadrants(width: 300, height: 200), contentType: "image/jpeg"))
        server.route("/iafc/gone.jpg", .status(404))
        server.route("/iafc/page.jpg", .ok(Array("<html>login</html>".utf8), contentType: "text/html"))
        server.route("/iafc/broken.jpg", .status(500))
    }

    func objects(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test("info prints one JSON object per source; a failing one prints run --json's error object and makes the exit 1")
    func infoLines() async throws {
        let profile = try directory.write("p.lua", Array(Self.profile.utf8))
        let sources = [server.url("/iafc/cover.jpg?t=secret1"), server.url("/iafc/page.jpg")]
        let info = try await CLIProcess.run(["info", profile, "--cache-dir", directory.file("cache")] + sources)
        #expect(info.status == 1)
        #expect(!info.stdout.contains("secret1"))
        let lines = try objects(info.stdout)
        #expect(lines.count == 2)
        let described = try #require(lines.first { $0["type"] as? String == "info" })
        #expect(
            described["width"] as? Int == 300 && described["height"] as? Int == 200
                && described["format"] as? String == "jpeg")
        #expect((described["blurhash"] as? String)?.count == 28)
        #expect(described["profile"] as? String == "thumb")

        // The same error object run --json prints for that source.
        let run = try await CLIProcess.run([
            "run", profile, "--cache-dir", directory.file("cache"), "--json",
            "--output-dir", directory.file("out"), sources[1],
        ])
        let error = try #require(lines.first { $0["type"] as? String == "error" })
        let runError = try #require(try objects(run.stdout).first)
        #expect(NSDictionary(dictionary: error).isEqual(to: runError))

        // The original stored by info is reused: a thumbnail of the same source makes no transfer.
        let before = server.requestCount("/iafc/cover.jpg")
        let thumb = try await CLIProcess.run([
            "run", profile, "--cache-dir", directory.file("cache"), "--output-dir", directory.file("out"),
            server.url("/iafc/cover.jpg?t=secret2"),
        ])
        #expect(thumb.status == 0)
        #expect(server.requestCount("/iafc/cover.jpg") == before)
    }

    @Test(
        "run --fallback writes the fallback, at the profile's size, where a missing source's result would go, and still exits 1"
    )
    func runFallback() async throws {
        let profile = try directory.write("p.lua", Array(Self.profile.utf8))
        let out = directory.file("fb")
        let sources = [
            server.url("/iafc/gone.jpg"), server.url("/iafc/page.jpg"), server.url("/iafc/broken.jpg"),
            server.url("/iafc/cover.jpg"),
        ]
        let run = try await CLIProcess.run(
            ["run", profile, "--cache-dir", directory.file("cache"), "--output-dir", out, "--json", "--fallback"]
                + sources)
        #expect(run.status == 1)
        let lines = try objects(run.stdout)
        let bySource = Dictionary(lines.map { ($0["source"] as? String ?? "", $0) }) { first, _ in first }
        for path in ["/iafc/gone.jpg", "/iafc/page.jpg"] {
            let line = try #require(bySource[server.url(path)])
            #expect(line["type"] as? String == "error")
            let written = try #require(line["fallback"] as? String, "\(path)")
            let pixels = try #require(Fixtures.decoded(try Fixtures.read(written)))
            #expect(pixels.width == 40 && pixels.height == 40 && pixels[20, 20] == [200, 30, 60])
        }
        // A server error is not a fallback failure by default; the good source is written as usual.
        #expect(bySource[server.url("/iafc/broken.jpg")]?["fallback"] == nil)
        #expect(bySource[server.url("/iafc/cover.jpg")]?["type"] as? String == "result")

        // Without --fallback nothing is written for a failure.
        let plain = try await CLIProcess.run([
            "run", profile, "--cache-dir", directory.file("cache"), "--output-dir", directory.file("nofb"),
            server.url("/iafc/gone.jpg"),
        ])
        #expect(plain.status == 1)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory.file("nofb")))?.isEmpty ?? true)
    }

    @Test("a fallback whose file is missing is a profile error naming the file and line")
    func missingFallbackFile() async throws {
        let profile = try directory.write(
            "bad.lua", Array(Self.profile.replacingOccurrences(of: "art/missing.png", with: "art/nope.png").utf8))
        let check = try await CLIProcess.run(["check", profile])
        #expect(check.status == 2)
        #expect(check.stderr.contains("bad.lua:8:") && check.stderr.contains("nope.png"), "\(check.stderr)")
    }
}
