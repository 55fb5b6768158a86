import Foundation
import TestSupport
import Testing

@Suite("pipelinehost: profile and usage errors exit 2 with one line", .needs(.process))
struct ErrorExitTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test(
        "broken profiles",
        arguments: [
            (
                "typo.lua",
                "profile \"t\" {\n  fetch {},\n  decode {},\n  downsample { sise = 300 },\n  encode {},\n}\n",
                "typo.lua:4: downsample: unknown parameter 'sise' (did you mean 'size'?)"
            ),
            (
                "type.lua", "profile \"t\" {\n  fetch { timeout = true },\n  decode {}, encode {},\n}\n",
                "type.lua:2: fetch: 'timeout' must be a number from 0.1 to 600, got a boolean (true)"
            ),
            (
                "nodecode.lua", "profile \"t\" {\n  fetch {},\n  downsample { size = 10 },\n  encode {},\n}\n",
                "nodecode.lua:3: downsample needs an image but gets encoded bytes from 'fetch'; add decode before it"
            ),
            // Whichever limit the loop meets first (HostileProfiles.cpuLimit): 20 million
            // instructions take a fraction of a second on an idle machine, and more than the 1 s
            // limit on a busy one. SandboxTests holds each limit alone.
            (
                "loop.lua", "profile \"t\" { fetch {}, decode {}, encode {} }\nwhile true do end\n",
                "loop.lua:2: profile exceeded the instruction limit (20000000 instructions)"
                    + "|loop.lua:2: profile exceeded the time limit (1.0 s)"
            ),
        ])
    func brokenProfile(_ name: String, _ lua: String, _ messages: String) async throws {
        let path = try directory.write(name, Array(lua.utf8))
        let expected = messages.split(separator: "|").map { "error: \(directory.path)/\($0)\n" }
        for arguments in [["run", path, "examples/sample.jpg", "--output-dir", directory.path], ["check", path]] {
            let run = try await CLIProcess.run(arguments, in: Fixtures.root.path)
            #expect(run.status == 2)
            #expect(expected.contains(run.stderr), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        #expect(directory.contents == [name])
    }

    @Test("usage errors exit 2 and say what to do")
    func usage() async throws {
        let noSource = try await CLIProcess.run(["run", "examples/thumbnail.lua"], in: Fixtures.root.path)
        #expect(noSource.status == 2)
        #expect(noSource.stderr.contains("give at least one SOURCE"))
        let both = try await CLIProcess.run(
            ["run", "examples/thumbnail.lua", "a.jpg", "b.jpg", "-o", "x.jpg"], in: Fixtures.root.path)
        #expect(both.status == 2)
        #expect(both.stderr.contains("-o takes one source and one profile"))
        // --no-cache turns the shared tier off too: naming one with it is a mistake, said at once.
        for command in [["run", "examples/thumbnail.lua", "a.jpg"], ["serve", "examples/thumbnail.lua"]] {
            let pair = try await CLIProcess.run(
                command + ["--no-cache", "--shared-cache", "redis://127.0.0.1:1"], in: Fixtures.root.path)
            #expect(pair.status == 2)
            #expect(pair.stderr.contains("--no-cache turns every cache off, the shared one too"), "\(pair.stderr)")
        }
    }
}

@Suite("pipelinehost check, stages and help", .needs(.process))
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

    @Test("stages --json gives every stage and parameter, typed, for tools")
    func stagesJSON() async throws {
        let run = try await CLIProcess.run(["stages", "--json"])
        #expect(run.status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let stages = try #require(document["stages"] as? [[String: Any]])
        let names = stages.compactMap { $0["name"] as? String }
        for name in [
            "fetch", "decode", "downsample", "sharpen", "rotate", "flip", "pad", "trim", "flatten", "round_corners",
            "encode",
        ] {
            #expect(names.contains(name), "missing \(name)")
        }
        let downsample = try #require(stages.first { $0["name"] as? String == "downsample" })
        let parameters = try #require(downsample["parameters"] as? [[String: Any]])
        let focus = try #require(parameters.first { $0["name"] as? String == "focus" })
        #expect(
            focus["type"] as? String == "number_list" && focus["count"] as? Int == 2
                && focus["range"] as? [Double] == [0, 1])
        let fit = try #require(parameters.first { $0["name"] as? String == "fit" })
        #expect(
            fit["choices"] as? [String] == ["inside", "cover", "contain"] && fit["default"] as? String == "\"inside\"")
    }

    @Test("stages --markdown is the stage reference: a linked index, and a table of parameters per stage")
    func stagesMarkdown() async throws {
        let run = try await CLIProcess.run(["stages", "--markdown"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("# Stages\n"))
        #expect(run.stdout.contains("| [`downsample`](#downsample) | an image → an image | VipsPlugin |"))
        #expect(run.stdout.contains("\n## round_corners\n"))
        // A choice's pipes are escaped, so the table keeps four columns.
        #expect(run.stdout.contains(#"| `on_error` | "fail"\|"stale" | `"fail"` | "#), "\(run.stdout)")
        #expect(run.stdout.contains("| `quality` | integer 1..100 | `82` | "))
    }

    /// Every command's help, at a width where nothing is wrapped: a paragraph is one line, so
    /// the argument parser can wrap it to any terminal without leaving a broken line.
    @Test(
        "help texts are written as paragraphs the argument parser wraps, never pre-broken",
        arguments: [[], ["run"], ["info"], ["check"], ["stages"], ["cache"], ["cache", "prune"], ["serve"], ["sign"]])
    func helpParagraphs(_ command: [String]) async throws {
        let wide = try await CLIProcess.run(command + ["--help"], environment: ["COLUMNS": "400"])
        let discussion = wide.stdout.components(separatedBy: "USAGE:")[0].split(
            separator: "\n", omittingEmptySubsequences: false)
        for (line, next) in zip(discussion, discussion.dropFirst()) where !line.isEmpty && !next.isEmpty {
            #expect(
                line.hasPrefix(" ") || next.hasPrefix(" ") || line.hasSuffix(":"),
                "a paragraph broken in the source: \"\(line)\" / \"\(next)\"")
        }
        let narrow = try await CLIProcess.run(command + ["--help"], environment: ["COLUMNS": "80"])
        for line in narrow.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
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
