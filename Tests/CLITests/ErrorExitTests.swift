import Foundation
import Testing
import TestSupport

@Suite("pipelinehost: profile and usage errors exit 2 with one line")
struct ErrorExitTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test("broken profiles", arguments: [
        ("typo.lua", "profile \"t\" {\n  fetch {},\n  decode {},\n  downsample { sise = 300 },\n  encode {},\n}\n",
         "typo.lua:4: downsample: unknown parameter 'sise' (did you mean 'size'?)"),
        ("type.lua", "profile \"t\" {\n  fetch { timeout = true },\n  decode {}, encode {},\n}\n",
         "type.lua:2: fetch: 'timeout' must be a number from 0.1 to 600, got a boolean (true)"),
        ("nodecode.lua", "profile \"t\" {\n  fetch {},\n  downsample { size = 10 },\n  encode {},\n}\n",
         "nodecode.lua:3: downsample needs an image but gets encoded bytes from 'fetch'; add decode before it"),
        ("loop.lua", "profile \"t\" { fetch {}, decode {}, encode {} }\nwhile true do end\n",
         "loop.lua:2: profile exceeded the instruction limit (20000000 instructions)"),
    ])
    func brokenProfile(_ name: String, _ lua: String, _ message: String) async throws {
        let path = try directory.write(name, Array(lua.utf8))
        for arguments in [["run", path, "examples/sample.jpg", "--output-dir", directory.path], ["check", path]] {
            let run = try await CLIProcess.run(arguments, in: Fixtures.root.path)
            #expect(run.status == 2)
            #expect(run.stderr == "error: \(directory.path)/\(message)\n")
            #expect(run.stdout.isEmpty)
        }
        #expect(directory.contents == [name])
    }

    @Test("usage errors exit 2 and say what to do")
    func usage() async throws {
        let noSource = try await CLIProcess.run(["run", "examples/thumbnail.lua"], in: Fixtures.root.path)
        #expect(noSource.status == 2)
        #expect(noSource.stderr.contains("give at least one SOURCE"))
        let both = try await CLIProcess.run(["run", "examples/thumbnail.lua", "a.jpg", "b.jpg", "-o", "x.jpg"], in: Fixtures.root.path)
        #expect(both.status == 2)
        #expect(both.stderr.contains("-o takes one source and one profile"))
    }
}

@Suite("pipelinehost check, stages and help")
struct InspectionCommandTests {
    @Test("check prints each profile's stages with resolved parameters")
    func check() async throws {
        let run = try await CLIProcess.run(["check", "examples/salted-urls.lua"], in: Fixtures.root.path)
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("examples/salted-urls.lua: 2 profiles, OK"))
        #expect(run.stdout.contains(#"profile "blurred-background""#))
        #expect(run.stdout.contains("dim=0.35, sigma=12"))
        #expect(run.stdout.contains("max_redirects=5 (default)"))
    }

    @Test("stages lists every stage with types, defaults and docs")
    func stages() async throws {
        let run = try await CLIProcess.run(["stages"])
        #expect(run.status == 0)
        for name in ["fetch", "normalize", "decode", "downsample", "blur", "encode", "cache"] {
            #expect(run.stdout.contains("\n\(name)  (") || run.stdout.hasPrefix("\(name)  ("), "missing \(name)")
        }
        #expect(run.stdout.contains("quality          integer 1..100  [default 82]"))
        #expect(run.stdout.contains("on_error         \"fail\"|\"stale\"  [default \"fail\"]"), "\(run.stdout)")
    }

    @Test("--help teaches with examples and exit codes")
    func help() async throws {
        let top = try await CLIProcess.run(["--help"])
        #expect(top.status == 0)
        #expect(top.stdout.contains("Exit codes: 0 all sources succeeded"))
        let run = try await CLIProcess.run(["run", "--help"])
        #expect(run.stdout.contains("Examples:"))
        #expect(run.stdout.contains("--output-dir"))
    }
}
