import PipelineHost
import TestSupport
import Testing

@Suite("Loading profile files", .needs(.pixels))
struct ProfileLoaderTests {
    @Test("the bundled examples load, with defaults filled in")
    func examplesLoad() throws {
        let loader = ProfileLoader(registry: try TestPipeline.registry())
        let thumbnail = try loader.load(file: Fixtures.path("examples/thumbnail.lua"))
        #expect(thumbnail.names == ["thumbnail"])
        let stages = thumbnail["thumbnail"]!.stages
        #expect(stages.map(\.name) == ["normalize", "fetch", "cache", "decode", "downsample", "encode", "cache"])
        #expect(stages[4].parameters.integer("size") == 300)
        #expect(stages[4].parameters.string("fit") == "cover")
        #expect(stages[2].parameters.boolean("disk") == true && stages[2].parameters.boolean("memory") == nil)
        #expect(stages[2].parameters.string("on_error") == "fail")  // a default
        #expect(stages[1].parameters.integer("max_bytes") == 20_000_000)  // 20e6 in Lua
        #expect(stages[1].parameters.integer("max_redirects") == 5)  // a default
        #expect(stages[1].parameters.explicit == ["timeout", "max_bytes"])

        let subsonic = try loader.load(file: Fixtures.path("examples/salted-urls.lua"))
        #expect(subsonic.names == ["thumbnail", "blurred-background"])
        #expect(subsonic["blurred-background"]!.stages.map(\.name).contains("blur"))
        _ = try loader.load(file: Fixtures.path("examples/blurred-background.lua"))
        let web = try loader.load(file: Fixtures.path("examples/srcset.lua"))
        #expect(web["web"]?.options.first { $0.name == "w" }?.spellings == ["320", "640", "960", "1280", "1920"])
    }

    @Test("a stage's identity is its name, version and sorted parameters")
    func identity() throws {
        let set = try TestPipeline.load(
            #"profile "p" { fetch {}, decode {}, downsample { size = 64, fit = "cover" }, encode {} }"#)
        let downsample = set["p"]!.stages[2]
        #expect(
            downsample.identity.description
                == #"downsample@1(enlarge=false,fit="cover",shrink_on_load="speed",size=64)"#)
    }

    @Test("a file with no profile is an error")
    func noProfile() throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load("local x = 1\n", name: "empty.lua") }
        #expect(error?.description.hasPrefix("empty.lua: defines no profile") == true)
    }

    @Test("a missing file names the file")
    func missingFile() throws {
        let loader = ProfileLoader(registry: try TestPipeline.registry())
        let error = #expect(throws: ProfileError.self) { try loader.load(file: "/nonexistent/p.lua") }
        #expect(error?.description == "/nonexistent/p.lua: cannot load profile: the file does not exist")
    }

    struct Mistake: Sendable, CustomStringConvertible {
        let name: String
        let lua: String
        let line: Int?
        let message: String
        var description: String { name }
    }

    static let mistakes: [Mistake] = [
        Mistake(
            name: "typo in a parameter",
            lua: """
                profile "t" {
                  fetch {},
                  decode {},
                  downsample { sise = 300 },
                  encode {},
                }
                """, line: 4, message: "downsample: unknown parameter 'sise' (did you mean 'size'?)"),
        Mistake(
            name: "type error",
            lua: """
                profile "t" {
                  fetch { timeout = "ten" },
                  decode {}, downsample { size = 10 }, encode {},
                }
                """, line: 2, message: #"fetch: 'timeout' must be a number from 0.1 to 600, got a string ("ten")"#),
        Mistake(
            name: "out of range",
            lua: """
                profile "t" {
                  fetch {}, decode {},
                  encode { quality = 101 },
                }
                """, line: 3, message: "encode: 'quality' must be between 1 and 100, got 101"),
        Mistake(
            name: "bad choice",
            lua: """
                profile "t" {
                  fetch {}, decode {},
                  encode { format = "jpg" },
                }
                """, line: 3,
            message:
                #"encode: 'format' must be one of "jpeg"|"png"|"webp"|"gif"|"avif"|"jxl"|"auto"|"source", got "jpg" (did you mean 'jpeg'?)"#
        ),
        Mistake(
            name: "missing decode",
            lua: """
                profile "t" {
                  fetch {},
                  blur { sigma = 3 },
                  encode {},
                }
                """, line: 3, message: "blur needs an image but gets encoded bytes from 'fetch'; add decode before it"),
        Mistake(
            name: "missing fetch",
            lua: """
                profile "t" {
                  decode {},
                  encode {},
                }
                """, line: 2, message: "decode needs encoded bytes but gets a source; add fetch before it"),
        Mistake(
            name: "missing encode",
            lua: """
                profile "t" {
                  fetch {},
                  decode {},
                  downsample { size = 10 },
                }
                """, line: 4, message: #"profile "t" ends with an image, not encoded bytes; add encode at the end"#),
        Mistake(
            name: "normalize after fetch",
            lua: """
                profile "t" {
                  fetch {},
                  normalize {},
                }
                """, line: 3,
            message:
                "normalize needs a source but gets encoded bytes from 'fetch'; key and request stages like 'normalize' must come before fetch"
        ),
        Mistake(
            name: "unknown stage",
            lua: """
                profile "t" {
                  fetsh {},
                }
                """, line: 2, message: "unknown stage or name 'fetsh' (did you mean 'fetch'?)"),
        Mistake(
            name: "stage not called",
            lua: """
                profile "t" {
                  fetch {}, decode, encode {},
                }
                """, line: 1,
            message: #"profile "t": entry 2 is a function, not a stage; call it with a table, like decode {}"#),
        Mistake(
            name: "positional parameter",
            lua: """
                profile "t" {
                  fetch { 10 },
                }
                """, line: 2, message: "fetch: parameters must be named, like fetch { timeout = 30 }"),
        Mistake(
            name: "inconsistent parameters",
            lua: """
                profile "t" {
                  fetch {}, decode {},
                  downsample { size = 300, width = 200 },
                  encode {},
                }
                """, line: 3, message: "downsample: give either size or width/height, not both"),
        Mistake(
            name: "cache keeps bytes, not decoded images",
            lua: """
                profile "t" {
                  fetch {}, decode {},
                  cache { memory = true },
                  encode {},
                }
                """, line: 3, message: "cache needs encoded bytes but gets an image from 'decode'; add encode before it"
        ),
        Mistake(
            name: "two caches in a row",
            lua: """
                profile "t" {
                  fetch {}, cache { disk = true },
                  cache { memory = true },
                  decode {}, encode {},
                }
                """, line: 3, message: "cache directly after cache; merge their parameters into one"),
        Mistake(
            name: "cache on_error takes fail or stale",
            lua: """
                profile "t" {
                  fetch {}, cache { on_error = "ignore" }, decode {}, encode {},
                }
                """, line: 2, message: "cache: 'on_error' must be one of \"fail\"|\"stale\", got \"ignore\""),
        Mistake(
            name: "duplicate profile",
            lua: """
                profile "t" { fetch {}, decode {}, encode {} }
                profile "t" { fetch {}, decode {}, encode {} }
                """, line: 2, message: #"profile "t" is already defined at line 1"#),
        Mistake(
            name: "profile without stages",
            lua: """
                profile "t"
                """, line: 1, message: #"profile "t" has no stage list; write profile "t" { fetch {}, ... }"#),
        Mistake(
            name: "syntax error",
            lua: """
                profile "t" {
                  fetch { timeout = },
                }
                """, line: 2, message: "unexpected symbol near '}'"),
        Mistake(
            name: "runtime error",
            lua: """
                local sizes = nil
                profile "t" { fetch {}, decode {}, downsample { size = sizes.small }, encode {} }
                """, line: 2, message: "attempt to index a nil value (local 'sizes')"),
    ]

    @Test("each mistake is one line naming file:line", arguments: mistakes)
    func mistake(_ mistake: Mistake) throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(mistake.lua, name: "profiles/t.lua") }
        #expect(error?.file == "profiles/t.lua")
        #expect(error?.line == mistake.line)
        #expect(error?.message == mistake.message)
        #expect(error?.description.contains("\n") == false)
    }
}
