import FacesPlugin
import Foundation
import PipelineHost
import TestSupport
import Testing

/// The faces plugin, as a profile uses it: found on a small copy, cropped around, reported by
/// info, shared and kept, blurred. Serialized: the detection counter is the whole process's.
@Suite("faces: crops that keep people's faces", .needs(.pixels), .serialized)
struct FacesTests {
    let directory: TemporaryDirectory
    let pipeline: Pipeline

    init() throws {
        directory = try TemporaryDirectory()
        pipeline = try FaceScenes.pipeline()
    }

    @Test("info finds the face where it was pasted, upright, in at least 9 of the 10 scenes (the goal)")
    func found() async throws {
        var missed: [String] = []
        let scenes = try await FaceScenes.all()
        for (index, scene) in scenes.enumerated() {
            // A file of its own each: the pipeline keeps what it made of a path.
            let path = try directory.write("scene\(index).jpg", scene.bytes)
            let faces = try await FaceScenes.faces(in: path, pipeline: pipeline)
            #expect(faces.count <= 1, "\(scene): \(faces)")
            guard let face = faces.first else {
                missed.append(scene.name)
                continue
            }
            // OpenCV's LBP boxes are tighter than the Haar box the scene was measured with.
            #expect(face.overlap(scene.face) > 0.4, "\(scene): found \(face), pasted at \(scene.face)")
        }
        #expect(missed.count <= 1, "missed: \(missed)")
        print(
            "faces: found in \(scenes.count - missed.count) of \(scenes.count) scenes; missed \(missed)"
        )
    }

    @Test("the square cover crop holds the whole face", arguments: FaceScenes.names)
    func framed(_ name: String) async throws {
        let scene = try await FaceScenes.scene(name)
        let path = try directory.write("scene.jpg", scene.bytes)
        let crop = try await pipeline.image(for: ImageRequest(source: path, profile: "faces"))
        #expect((crop.size?.width, crop.size?.height) == (400, 400))
        // Found again in the crop, whole: as large as the face at this scale, not a part of it.
        let cropped = try directory.write("crop.png", crop.bytes.array)
        let faces = try await FaceScenes.faces(in: cropped, pipeline: pipeline)
        let scale = 400 / Double(min(scene.width, scene.height))
        let expected = Double(scene.face.width) * scale
        try #require(faces.count == 1, "\(scene): faces in the crop: \(faces)")
        #expect(abs(Double(faces[0].width) - expected) < expected * 0.35, "\(scene): \(faces[0]), \(expected) px wide")
    }

    @Test(
        "with no face, the crop is attention's, byte for byte", arguments: ["coffee.png", "chelsea.png", "sample.jpg"])
    func noFace(_ name: String) async throws {
        let bytes = name == "sample.jpg" ? Fixtures.sample : try FacePhotos.photo(name)
        let path = try directory.write(name, bytes)
        #expect(try await FaceScenes.faces(in: path, pipeline: pipeline) == [])
        let faces = try await pipeline.image(for: ImageRequest(source: path, profile: "faces"))
        let attention = try await pipeline.image(for: ImageRequest(source: path, profile: "attention"))
        #expect(firstDifference(faces.bytes, attention.bytes) == nil, "faces against attention")
    }

    @Test("ten sizes at once search the photo once, and a later size not at all")
    func searchedOnce() async throws {
        let scene = try FacePhotos.scene(
            "shared", background: "coffee.png", width: 2000, height: 1000, at: (0.7, 0.4), scale: 1.2)
        let path = try directory.write("shared.jpg", scene.bytes)
        let lua = """
            profile "p" {
              fetch {}, decode {}, faces {}, downsample { size = 100, fit = "cover", gravity = "faces" },
              encode { format = "jpeg" },
            }
            """
        func sized(_ size: Int) -> ImageRequest {
            ImageRequest(source: path, profile: "p", overrides: ["downsample": ["size": .integer(size)]])
        }
        let pipeline = Pipeline(profiles: try TestPipeline.load(lua, extra: [FacesPlugin.self]))
        let before = FaceScenes.detections
        try await withThrowingTaskGroup(of: Void.self) { group in
            for size in stride(from: 100, through: 1000, by: 100) {
                group.addTask {
                    let result = try await pipeline.image(for: sized(size))
                    #expect(result.size?.width == size)
                }
            }
            try await group.waitForAll()
        }
        #expect(FaceScenes.detections - before == 1)
        let later = try await pipeline.image(for: sized(64))
        #expect(later.size?.width == 64)
        #expect(FaceScenes.detections - before == 1, "a later size reads the faces kept with the source's bytes")
    }

    @Test("blur_faces blurs the face after the crop and leaves the rest as it was")
    func blurred() async throws {
        let scene = try await FaceScenes.all()[0]
        let path = try directory.write("scene.jpg", scene.bytes)
        let blurred = try await pipeline.image(for: ImageRequest(source: path, profile: "blurred"))
        let plain = try await pipeline.image(for: ImageRequest(source: path, profile: "unblurred"))
        let a = try #require(Fixtures.decoded(blurred.bytes.array)),
            b = try #require(Fixtures.decoded(plain.bytes.array))
        let cropped = try directory.write("crop.png", plain.bytes.array)
        let face = try #require(try await FaceScenes.faces(in: cropped, pipeline: pipeline).first)
        // Detail (neighbours' differences) inside the face: mostly gone.
        func detail(_ p: Fixtures.Pixels) -> Double {
            var sum = 0.0
            for y in face.y..<face.y + face.height {
                for x in face.x..<face.x + face.width - 1 {
                    sum += Double(abs(Int(p[x, y][1]) - Int(p[x + 1, y][1])))
                }
            }
            return sum / Double(face.width * face.height)
        }
        #expect(detail(a) < detail(b) * 0.4, "detail \(detail(a)) blurred, \(detail(b)) before")
        // A corner far from the face is untouched.
        #expect(a[399, 399] == b[399, 399] || a[0, 399] == b[0, 399])
        // The blurred crop has no face left to find.
        let hidden = try directory.write("hidden.png", blurred.bytes.array)
        #expect(try await FaceScenes.faces(in: hidden, pipeline: pipeline) == [])
    }

    @Test("blur_faces after a stage that moved the pixels fails rather than leave a face showing")
    func blurAfterRotate() async throws {
        let path = try directory.write("scene.jpg", try await FaceScenes.all()[0].bytes)
        let lua = """
            profile "p" { fetch {}, decode {}, faces {}, rotate { angle = 90 }, blur_faces {}, encode { format = "png" } }
            """
        let pipeline = Pipeline(profiles: try TestPipeline.load(lua, extra: [FacesPlugin.self]))
        let error = await #expect(throws: PipelineError.self) {
            try await pipeline.image(for: ImageRequest(source: path, profile: "p"))
        }
        #expect(error?.description.contains("blur_faces: a stage since faces moved the pixels") == true)
    }
}
