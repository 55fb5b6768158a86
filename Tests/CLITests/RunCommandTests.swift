import Foundation
import TestSupport
import Testing

@Suite("pipelinehost run, as a subprocess", .needs(.pixels, .network, .process), .loopbackOrigin)
struct RunCommandTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let thumbnail = Fixtures.path("examples/thumbnail.lua")

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/photo.jpg", .ok(Fixtures.sample, contentType: "image/jpeg"))
    }

    @Test("a URL becomes a 300x300 JPEG at -o, with one result line")
    func singleOutput() async throws {
        let output = directory.file("t.jpg")
        let run = try await CLIProcess.run(["run", thumbnail, server.url("/photo.jpg"), "-o", output])
        #expect(run.status == 0, "\(run.output)")
        let info = try #require(Fixtures.info([UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))))
        #expect((info.format, info.width, info.height) == ("jpeg", 300, 300))
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("ok      \(server.url("/photo.jpg")) -> \(output)  300x300  ") == true)
        #expect(run.stderr.isEmpty)
    }

    @Test(
        "--accept picks the format of an encode that says \"auto\", as serve's Accept does",
        arguments: [
            (nil, "jpeg"), ("image/webp,*/*", "webp"), ("image/webp;q=0, image/png", "jpeg"),
        ] as [(String?, String)])
    func accept(_ accept: String?, _ format: String) async throws {
        let profile = try directory.write(
            "auto.lua",
            Array(#"profile "auto" { fetch {}, decode {}, downsample { size = 64 }, encode { format = "auto" } }"#.utf8)
        )
        let run = try await CLIProcess.run(
            [
                "run", profile, server.url("/photo.jpg"), "--output-dir",
                directory.file("out-\(format)-\(accept == nil)"),
            ]
                + (accept.map { ["--accept", $0] } ?? []))
        #expect(run.status == 0, "\(run.output)")
        let written = try FileManager.default.contentsOfDirectory(
            atPath: directory.file("out-\(format)-\(accept == nil)"))
        #expect(written.count == 1 && written[0].hasSuffix(".auto.\(format == "jpeg" ? "jpg" : format)"), "\(written)")
        let info = try #require(
            Fixtures.info(try Fixtures.read(directory.file("out-\(format)-\(accept == nil)/" + written[0]))))
        #expect(info.format == format)
    }

    @Test("EXIF orientation is applied")
    func orientation() async throws {
        server.route("/rotated.jpg", .ok(Fixtures.quadrants(width: 600, height: 300, orientation: 6)))
        let output = directory.file("r.jpg")
        let run = try await CLIProcess.run([
            "run", Fixtures.path("examples/blurred-background.lua"), server.url("/rotated.jpg"), "-o", output,
        ])
        #expect(run.status == 0, "\(run.output)")
        let info = try #require(Fixtures.info([UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))))
        #expect((info.width, info.height) == (256, 512))
    }

    @Test("one bad source fails alone: exit 1, the others written, no temporary files")
    func partialFailure() async throws {
        server.route("/fine.jpg", .ok(Fixtures.quadrants(width: 640, height: 480)))
        let out = directory.file("out")
        let run = try await CLIProcess.run([
            "run", thumbnail, server.url("/photo.jpg"), server.url("/missing.jpg?t=tok"),
            server.url("/fine.jpg"), "--output-dir", out,
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.stderr.contains("failed  \(server.url("/missing.jpg?t=REDACTED")): HTTP 404"))
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files.count == 2)
        #expect(files.allSatisfy { $0.hasSuffix(".thumbnail.jpg") })
        #expect(files.contains { $0.hasPrefix("photo-") } && files.contains { $0.hasPrefix("fine-") })
    }

    @Test("credentials never appear in the output")
    func redaction() async throws {
        let secret = "supersecretpassword"
        let run = try await CLIProcess.run([
            "run", Fixtures.path("examples/salted-urls.lua"), "--profile", "thumbnail",
            server.url("/photo.jpg?id=1&u=alice&p=\(secret)&t=\(secret)&s=\(secret)"),
            server.url("/missing?id=2&p=\(secret)"),
            "--output-dir", directory.path,
        ])
        #expect(run.status == 1)
        #expect(!run.output.contains(secret))
        #expect(!run.output.contains("alice"))  // u is in the profile's drop list
        #expect(run.stdout.contains("u=REDACTED&p=REDACTED&t=REDACTED&s=REDACTED"))
        #expect(!directory.contents.joined().contains(secret))
    }

    @Test("salted URLs of one image get one output name")
    func stableNames() async throws {
        let subsonic = Fixtures.path("examples/salted-urls.lua")
        for salt in ["a1", "b2"] {
            let run = try await CLIProcess.run([
                "run", subsonic, "--profile", "blurred-background",
                server.url("/photo.jpg?id=7&u=me&t=\(salt)&s=\(salt)"), "--output-dir", directory.path,
            ])
            #expect(run.status == 0, "\(run.output)")
        }
        #expect(directory.contents.count == 1)
        #expect(directory.contents.first?.hasSuffix(".blurred-background.jpg") == true)
    }

    @Test("a file with several profiles needs --profile, and names them")
    func chooseProfile() async throws {
        let subsonic = Fixtures.path("examples/salted-urls.lua")
        let run = try await CLIProcess.run(["run", subsonic, server.url("/photo.jpg")])
        #expect(run.status == 2)
        #expect(
            run.stderr.contains(
                #"defines several profiles ("thumbnail", "blurred-background"); choose one with --profile NAME"#))
        let wrong = try await CLIProcess.run(["run", subsonic, "--profile", "thumb", server.url("/photo.jpg")])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains(#"has no profile "thumb""#))
    }

    @Test("a local path works, and scripts/run's default job writes a thumbnail")
    func localPath() async throws {
        let run = try await CLIProcess.run(
            ["run", "examples/thumbnail.lua", "examples/sample.jpg", "--output-dir", directory.path],
            in: Fixtures.root.path)
        #expect(run.status == 0, "\(run.output)")
        #expect(directory.contents.count == 1)
        #expect(directory.contents.first?.hasPrefix("sample-") == true)
    }
}
