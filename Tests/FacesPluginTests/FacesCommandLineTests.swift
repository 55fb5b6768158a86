import Foundation
import PipelineHost
import TestSupport
import Testing

/// The faces profile as a user runs it: `pipelinehost info` and `run` with examples/faces.lua,
/// through the release binary scripts/test builds with every trait.
@Suite("faces from the command line", .needs(.pixels, .process))
struct FacesCommandLineTests {
    @Test("info lists the face, upright, and run crops the avatar around it")
    func infoAndRun() async throws {
        let stages = try await CLIProcess.run(["stages"])
        try #require(
            stages.stdout.contains("faces"),
            "\(CLIProcess.executable) is built without the trait Faces; scripts/test sets PIPELINEHOST_BIN to a build with it"
        )
        let directory = try TemporaryDirectory()
        let scene = try await FaceScenes.all()[8]  // stored turned: EXIF orientation 6
        let path = try directory.write("portrait.jpg", scene.bytes)
        let example = Fixtures.path("examples/faces.lua")
        let info = try await CLIProcess.run(["info", example, path, "--profile", "avatar"])
        #expect(info.status == 0, "\(info.output)")
        struct Line: Decodable {
            struct Face: Decodable { let x: Int, y: Int, w: Int, h: Int }
            let width: Int, height: Int, faces: [Face]
        }
        let described = try JSONDecoder().decode(Line.self, from: Data(info.stdout.utf8))
        #expect((described.width, described.height) == (scene.width, scene.height))
        let face = try #require(described.faces.first, "\(info.stdout)")
        let found = FacePhotos.Box(x: face.x, y: face.y, width: face.w, height: face.h)
        #expect(found.overlap(scene.face) > 0.4, "found \(found), pasted at \(scene.face)")

        let run = try await CLIProcess.run([
            "run", example, path, "--profile", "avatar", "--output-dir", directory.path,
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("300x300"), "\(run.output)")
    }

    @Test("serve's /info lists the faces, and the image crops around them", .needs(.network))
    func serveInfo() async throws {
        let scene = try await FaceScenes.all()[1]
        let origin = try LoopbackServer()
        origin.route("/portrait.jpg", .ok(scene.bytes))
        let directory = try TemporaryDirectory()
        let profile = try directory.write(
            "faces.lua",
            Array(
                """
                profile "avatar" {
                  fetch { allow_loopback = true }, decode {}, faces {},
                  downsample { size = 200, fit = "cover", gravity = "faces" }, encode { format = "png" },
                  info {},
                }
                """.utf8))
        let service = try await ServeProcess(
            profileFile: profile, ["--allow-unsigned", "--cache-dir", directory.file("cache")])
        let source = base64url(origin.url("/portrait.jpg"))
        let info = try await Curl.get(service.baseURL + "/info/unsafe/avatar/" + source)
        let image = try await Curl.get(service.baseURL + "/unsafe/avatar/" + source)
        _ = try await service.stop()
        #expect(info.status == 200, "\(info.text)")
        struct Described: Decodable {
            struct Face: Decodable { let x: Int, y: Int, w: Int, h: Int }
            let faces: [Face]
        }
        let face = try #require(try JSONDecoder().decode(Described.self, from: Data(info.body)).faces.first)
        let found = FacePhotos.Box(x: face.x, y: face.y, width: face.w, height: face.h)
        #expect(found.overlap(scene.face) > 0.4, "found \(found), pasted at \(scene.face)")
        #expect(image.status == 200 && Fixtures.info(image.body)?.width == 200)
    }
}
