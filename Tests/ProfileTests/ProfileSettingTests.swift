import Foundation
import PipelineHost
import TestSupport
import Testing

/// `info { ... }` and `fallback { ... }`: entries that configure a profile rather than steps of
/// its chain, and the chains made from them.
@Suite("profile settings: info and fallback", .needs(.pixels))
struct ProfileSettingTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        _ = try directory.write("missing.png", Fixtures.painted(width: 8, height: 8) { _, _ in [1, 2, 3] })
    }

    func load(_ lua: String) throws -> ProfileSet {
        try TestPipeline.load(lua, name: directory.file("p.lua"))
    }

    @Test("settings stay out of the chain; the info and fallback chains reuse the profile's stages")
    func derivedChains() throws {
        let set = try load(
            """
            profile "p" {
              normalize { drop_query = { "t" } }, fetch {}, cache { disk = true }, decode {}, downsample { size = 10 }, encode {},
              info { gps = true },
              fallback { file = "missing.png", on = { "not_found", "timeout" } },
            }
            """)
        let profile = try #require(set["p"])
        #expect(profile.stages.map(\.name) == ["normalize", "fetch", "cache", "decode", "downsample", "encode"])
        #expect(profile.info?.parameters.boolean("gps") == true)
        #expect(profile.fallbackSetting?.on == ["not_found", "timeout"])
        #expect(profile.fallbackSetting?.status == 404 && profile.fallbackSetting?.maxAge == 30)
        #expect(
            set[ProfileSet.infoName("p")]?.stages.map(\.name) == [
                "normalize", "fetch", "cache", "decode", "info", "cache",
            ])
        #expect(
            set[ProfileSet.fallbackName("p")]?.stages.map(\.name) == [
                "fallback", "decode", "downsample", "encode", "cache",
            ])
        #expect(set.names == ["p"] && !set.defines(ProfileSet.infoName("p")))
        // The shared steps are the profile's own, so their keys are too.
        #expect(set[ProfileSet.infoName("p")]?.stages[3].identity == profile.stages[3].identity)
    }

    @Test("the fallback's file is part of its identity")
    func fallbackDigest() throws {
        let lua = #"profile "p" { fetch {}, decode {}, encode {}, fallback { file = "missing.png" } }"#
        let before = try #require(try load(lua)["p"]?.fallback?.identity)
        _ = try directory.write("missing.png", Fixtures.painted(width: 8, height: 8) { _, _ in [9, 9, 9] })
        let after = try #require(try load(lua)["p"]?.fallback?.identity)
        #expect(before != after)
    }

    @Test(
        "a fallback, an overlay or a profile that is huge, endless or not a file is refused before it is read",
        arguments: ["fallback { file = \"%@\" }", "overlay { image = \"%@\" }"])
    func filesAreBoundedBeforeTheyAreRead(_ entry: String) throws {
        // A 3 GB sparse file costs no disk; reading it would cost 3 GB of memory.
        let sparse = directory.file("huge.png")
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
        #expect(truncate(sparse, 3 << 30) == 0)
        let fifo = directory.file("pipe.png")
        #expect(mkfifo(fifo, 0o600) == 0 || errno == EEXIST)
        for (path, says) in [
            (sparse, "is larger than 20.0 MB"), (fifo, "is not a regular file"), ("/dev/zero", "is not a regular file"),
        ] {
            let line = entry.replacingOccurrences(of: "%@", with: path)
            let stages =
                line.hasPrefix("overlay")
                ? "fetch {}, decode {}, \(line), encode {}" : "fetch {}, decode {}, encode {}, \(line)"
            let error = #expect(throws: ProfileError.self, "\(line)") { try load("profile \"p\" { \(stages) }\n") }
            #expect(error?.line == 1 && error?.message.contains(says) == true, "\(String(describing: error))")
        }
        for (path, says) in [
            (sparse, "cannot load profile: the file is larger than 16.0 MB"),
            (fifo, "cannot load profile: the file is not a regular file"),
        ] {
            let error = #expect(throws: ProfileError.self) {
                try ProfileLoader(registry: TestPipeline.registry()).load(file: path)
            }
            #expect(error?.message == says, "\(String(describing: error))")
        }
    }

    @Test(
        "mistakes name the file and line",
        arguments: [
            (#"fallback { status = 404 }"#, "fallback: needs file"),
            (#"fallback { file = "nope.png" }"#, "file \"nope.png\" does not exist"),
            (
                #"fallback { file = "missing.png", on = { "cancelled" } }"#,
                "'cancelled' is not a failure that can fall back"
            ),
            (
                #"fallback { file = "missing.png" }, fallback { file = "missing.png" }"#,
                "fallback is already set at line 3"
            ),
            (#"info {}, info { gps = true }"#, "info is already set at line 3"),
        ])
    func mistakes(_ entries: String, _ message: String) throws {
        let error = #expect(throws: ProfileError.self) {
            try load("profile \"p\" {\n  fetch {}, decode {}, encode {},\n  \(entries),\n}\n")
        }
        #expect(error?.description.contains("p.lua:") == true, "\(String(describing: error))")
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }
}
