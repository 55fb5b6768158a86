import Foundation
import TestSupport
import Testing

@testable import PipelineHostCommandLine

@Suite(
    "pipelinehost: output files are never silently overwritten or misplaced", .needs(.pixels, .network, .process))
struct OutputSafetyTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test("names carry 64 bits of SHA-256 of the source key")
    func sixtyFourBits() {
        #expect(OutputName.hash("https://music.example/rest/getCoverArt?id=1") == "652bed05fb73c111")
        #expect(OutputName.hash("a").count == 16)
        #expect(OutputName.hash("a") != OutputName.hash("b"))
    }

    @Test("a name already written for another source in this run is refused; the same source may repeat")
    func claims() {
        var claims = OutputClaims()
        let first = claims.claim("out/getCoverArt-1.thumbnail.jpg", for: "https://m.example/rest/getCoverArt?id=1")
        let again = claims.claim("out/getCoverArt-1.thumbnail.jpg", for: "https://m.example/rest/getCoverArt?id=1")
        let other = claims.claim("out/getCoverArt-1.thumbnail.jpg", for: "https://m.example/rest/getCoverArt?id=2")
        let elsewhere = claims.claim("out/getCoverArt-2.thumbnail.jpg", for: "https://m.example/rest/getCoverArt?id=2")
        #expect(first && again && !other && elsewhere)
    }

    @Test("many covers with one stem get one file each")
    func oneStem() async throws {
        let server = try LoopbackServer()
        server.route("/rest/getCoverArt", .ok(Fixtures.quadrants(width: 64, height: 48), contentType: "image/jpeg"))
        let sources = (1...20).map { server.url("/rest/getCoverArt?id=\($0)") }
        let run = try await CLIProcess.run(
            ["run", Fixtures.path("examples/thumbnail.lua"), "--output-dir", directory.path] + sources)
        #expect(run.status == 0, "\(run.stderr)")
        let names = directory.contents
        #expect(names.count == 20)
        #expect(names.allSatisfy { $0.wholeMatch(of: /getCoverArt-[0-9a-f]{16}\.thumbnail\.jpg/) != nil }, "\(names)")
    }

    @Test("-o onto a device or a directory is refused and leaves it alone", arguments: ["/dev/null", "directory"])
    func notRegular(_ target: String) async throws {
        let path = target.hasPrefix("/") ? target : directory.file(target)
        if !target.hasPrefix("/") {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        var before = stat()
        #expect(lstat(path, &before) == 0)
        let run = try await CLIProcess.run([
            "run", Fixtures.path("examples/thumbnail.lua"), Fixtures.path("examples/sample.jpg"), "-o", path,
        ])
        #expect(run.status == 1)
        #expect(
            run.stderr
                == "failed  \(Fixtures.path("examples/sample.jpg")): cannot write \(path): it exists and is not a regular file\n"
        )
        var after = stat()
        #expect(lstat(path, &after) == 0)
        #expect(after.st_mode == before.st_mode && after.st_ino == before.st_ino && after.st_rdev == before.st_rdev)
        let parent = String(path[..<path.lastIndex(of: "/")!])
        let leftovers =
            (try? FileManager.default.contentsOfDirectory(atPath: parent).filter { $0.hasSuffix(".tmp") }) ?? []
        #expect(leftovers.isEmpty)
    }

    @Test("--output-dir that is a file, or under one, is a one-line error")
    func outputDirectoryIsAFile() async throws {
        let file = try directory.write("plain.txt", Array("x".utf8))
        for (argument, message) in [
            (file, "error: --output-dir \(file) exists and is not a directory\n"),
            (file + "/sub", "error: cannot create --output-dir \(file)/sub: Not a directory\n"),
        ] {
            let run = try await CLIProcess.run([
                "run", Fixtures.path("examples/thumbnail.lua"), Fixtures.path("examples/sample.jpg"),
                "--output-dir", argument,
            ])
            #expect(run.status == 2)
            #expect(run.stderr == message)
        }
    }
}
