import FacesPlugin
import Foundation
import PipelineHost
import TestSupport

/// The ten scenes the framing goal is measured on: the astronaut's portrait off-centre in wide
/// and tall photos, one stored turned by EXIF, and the run that finds faces in them.
enum FaceScenes {
    /// Each scene: its name, background photo, size, where the portrait goes, its scale, and
    /// whether the file is stored turned.
    static let specs: [(String, String, Int, Int, (Double, Double), Double, Bool)] = [
        ("wide, far left", "sample.jpg", 2400, 800, (0.02, 0.5), 1.2, false),
        ("wide, far right", "sample.jpg", 2400, 800, (0.97, 0.3), 1.4, false),
        ("wide, left third, low", "coffee.png", 2400, 900, (0.25, 0.9), 1.3, false),
        ("wide, right, small", "chelsea.png", 3000, 1000, (0.85, 0.2), 1.2, false),
        ("panorama, left", "sample.jpg", 3600, 900, (0.1, 0.4), 1.3, false),
        ("tall, top", "sample.jpg", 900, 2400, (0.3, 0.02), 1.4, false),
        ("tall, bottom", "coffee.png", 900, 2400, (0.8, 0.98), 1.3, false),
        ("tall, low middle", "chelsea.png", 1000, 2600, (0.5, 0.75), 1.5, false),
        ("tall, stored turned (EXIF 6)", "sample.jpg", 900, 2400, (0.2, 0.85), 1.3, true),
        ("wide, stored turned (EXIF 6)", "coffee.png", 2400, 900, (0.9, 0.1), 1.3, true),
    ]

    /// The scenes' names, for parameterized tests: arguments are made while the run is planned,
    /// before any test starts, and the scenes take seconds.
    static var names: [String] { specs.map(\.0) }

    /// The scenes, made once on a thread of their own and awaited by every test that needs them.
    /// A `static let` of them was made by the first test to read it, holding a cooperative thread
    /// for seconds, with every other reader blocked on another.
    static func all() async throws -> [FacePhotos.Scene] { try await made.value }

    /// The scene called `name`.
    static func scene(_ name: String) async throws -> FacePhotos.Scene {
        guard let scene = try await all().first(where: { $0.name == name }) else {
            throw ServerError("no scene called \(name)")
        }
        return scene
    }

    private static let made = Task {
        try await onOwnThread {
            try specs.map { name, background, width, height, place, scale, turned in
                try FacePhotos.scene(
                    name, background: background, width: width, height: height, at: place, scale: scale,
                    orientation6: turned)
            }
        }
    }

    static let profiles = """
        profile "faces" {
          fetch {}, decode {}, faces {}, downsample { size = 400, fit = "cover", gravity = "faces" },
          encode { format = "png" },
          info {},
        }
        profile "attention" {
          fetch {}, decode {}, downsample { size = 400, fit = "cover", gravity = "attention" }, encode { format = "png" },
        }
        profile "blurred" {
          fetch {}, decode {}, faces {}, downsample { size = 400, fit = "cover", gravity = "faces" }, blur_faces {},
          encode { format = "png" },
        }
        profile "unblurred" {
          fetch {}, decode {}, faces {}, downsample { size = 400, fit = "cover", gravity = "faces" },
          encode { format = "png" },
        }
        """

    static func pipeline() throws -> Pipeline {
        Pipeline(profiles: try TestPipeline.load(profiles, name: "faces.lua", extra: [FacesPlugin.self]))
    }

    /// What info says of the faces in `path`, upright.
    static func faces(in path: String, pipeline: Pipeline) async throws -> [FacePhotos.Box] {
        struct Described: Decodable {
            struct Face: Decodable { let x: Int, y: Int, w: Int, h: Int }
            let faces: [Face]?
        }
        let result = try await pipeline.image(for: ImageRequest(source: path, profile: ProfileSet.infoName("faces")))
        let described = try JSONDecoder().decode(Described.self, from: Data(result.bytes.array))
        guard let faces = described.faces else { throw ServerError("info has no faces field") }
        return faces.map { FacePhotos.Box(x: $0.x, y: $0.y, width: $0.w, height: $0.h) }
    }

    /// The number of images the process has searched for faces.
    static var detections: Int {
        ProcessCounters.snapshot().first { $0.counter.name == "faces_detections" }?.value ?? -1
    }
}
