import FacesPlugin
import PipelineHost
import TestSupport
import Testing

/// What a profile may ask of faces, checked when it loads, with the file and line.
@Suite("faces in profiles: refused at load, naming the line")
struct FacesProfileTests {
    @Test("gravity = \"faces\" needs a faces stage before it")
    func needsFinder() throws {
        let lua = """
            profile "p" {
              fetch {}, decode {},
              downsample { size = 100, fit = "cover", gravity = "faces" },
              encode {},
            }
            """
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(lua, name: "p.lua", extra: [FacesPlugin.self])
        }
        #expect(
            error
                == ProfileError(
                    file: "p.lua", line: 3, "downsample needs faces found before it: add faces {} before it"))
    }

    @Test("a build without the detector says so, at the line that asks")
    func withoutDetector() throws {
        let crop = """
            profile "p" {
              fetch {}, decode {}, downsample { size = 100, fit = "cover", gravity = "faces" }, encode {},
            }
            """
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(crop, name: "p.lua") }
        #expect(
            error
                == ProfileError(
                    file: "p.lua", line: 2,
                    "downsample needs faces found before it: this pipelinehost has no stage that finds faces"))

        // The stock executable without the trait Faces announces the stages it leaves out.
        enum Missing: PipelinePlugin {
            static func register(in registry: inout StageRegistry) throws {
                registry.plan("faces", reason: "built without the face detector")
            }
        }
        let stage = """
            profile "p" {
              fetch {}, decode {},
              faces {}, downsample { size = 100, fit = "cover", gravity = "faces" }, encode {},
            }
            """
        let missing = #expect(throws: ProfileError.self) {
            try TestPipeline.load(stage, name: "p.lua", extra: [Missing.self])
        }
        #expect(missing == ProfileError(file: "p.lua", line: 3, "faces: built without the face detector"))
    }

    @Test(
        "faces' and blur_faces' numbers are range-checked",
        arguments: [
            ("faces { detail = 100 }", "faces: 'detail' must be between 200 and 1200, got 100"),
            ("faces { limit = 0 }", "faces: 'limit' must be between 1 and 100, got 0"),
            ("faces {}, blur_faces { sigma = 500 }", "blur_faces: 'sigma' must be between 1 and 200, got 500"),
        ])
    func ranges(_ stages: String, _ message: String) throws {
        let lua = """
            profile "p" {
              fetch {}, decode {},
              \(stages), encode {},
            }
            """
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(lua, name: "p.lua", extra: [FacesPlugin.self])
        }
        #expect(error == ProfileError(file: "p.lua", line: 3, message))
    }

    @Test("contain keeps the whole image: it refuses gravity = \"faces\"")
    func containRefuses() throws {
        let lua = """
            profile "p" {
              fetch {}, decode {}, faces {},
              downsample { width = 100, height = 50, fit = "contain", gravity = "faces" }, encode {},
            }
            """
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(lua, name: "p.lua", extra: [FacesPlugin.self])
        }
        #expect(error?.message.contains("it takes a compass gravity, not gravity = \"faces\"") == true)
    }
}
