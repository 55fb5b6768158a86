import PipelineHost
import TestSupport
import Testing

/// `params { ... }` and `param "w"`: what a request may choose, checked for every value when the
/// profile loads, and resolved the one way the CLI and serve both use.
@Suite("profile options: params and param", .needs(.pixels))
struct ProfileOptionTests {
    static let resize = """
        profile "resize" {
          params     { w = { 100, 300, 600, default = 300 }, q = { from = 60, to = 90, step = 10, default = 80 },
                       f = { "jpeg", "webp" }, dpr = { 1, 1.5, 2, hint = "DPR" } },
          fetch      {},
          decode     {},
          downsample { width = param "w", dpr = param "dpr" },
          encode     { quality = param "q", format = param "f" },
        }
        """

    @Test("options are declared with their values and default, and the stage holds the default")
    func declared() throws {
        let profile = try #require(try TestPipeline.load(Self.resize)["resize"])
        #expect(profile.options.map(\.name) == ["dpr", "f", "q", "w"])
        let q = try #require(profile.options.first { $0.name == "q" })
        #expect(q.spellings == ["60", "70", "80", "90"] && q.defaultValue == .integer(80))
        #expect(profile.options.first { $0.name == "f" }?.defaultValue == .string("jpeg"))
        #expect(profile.options.first { $0.name == "dpr" }?.spellings == ["1", "1.5", "2"])
        #expect(profile.options.first { $0.name == "dpr" }?.hint == .dpr)
        #expect(profile.stages[2].parameters.integer("width") == 300)
        #expect(profile.stages[3].parameters.integer("quality") == 80)
        #expect(profile.variantCount == 3 * 4 * 2 * 3)
    }

    @Test("a choice becomes the overrides of the stages it sets, in any order; a default chooses nothing")
    func resolves() throws {
        let profile = try #require(try TestPipeline.load(Self.resize)["resize"])
        let (one, _) = try profile.resolve([("w", "600"), ("q", "60")])
        let (other, _) = try profile.resolve([("q", "60"), ("w", "600")])
        #expect(one == other)
        #expect(one == ["downsample": ["width": .integer(600)], "encode": ["quality": .integer(60)]])
        #expect(try profile.resolve([("w", "300")]).overrides.isEmpty)
        #expect(try profile.resolve([]).overrides.isEmpty)
        #expect(try profile.resolve([("f", "webp")]).overrides == ["encode": ["format": .string("webp")]])
    }

    @Test(
        "one spelling per value; unknown, repeated and outside values are refused, naming what is allowed",
        arguments: [
            ("w", "0600", "w:0600 is not allowed; w takes 100, 300, 600"),
            ("w", "6e2", "w:6e2 is not allowed; w takes 100, 300, 600"),
            ("w", "700", "w:700 is not allowed; w takes 100, 300, 600"),
            ("dpr", "1.50", "dpr:1.50 is not allowed; dpr takes 1, 1.5, 2"),
            ("width", "600", "unknown option \"width\"; profile \"resize\" takes dpr, f, q, w"),
        ])
    func refusals(_ name: String, _ value: String, _ message: String) throws {
        let profile = try #require(try TestPipeline.load(Self.resize)["resize"])
        let error = #expect(throws: OptionError.self) { try profile.resolve([(Substring(name), Substring(value))]) }
        #expect(error?.message == message)
        let twice = #expect(throws: OptionError.self) { try profile.resolve([("w", "100"), ("w", "600")]) }
        #expect(twice?.message == "option w is given twice")
    }

    @Test("a client hint rounds up to the nearest allowed value, and says which headers it read")
    func hints() throws {
        let profile = try #require(try TestPipeline.load(Self.resize)["resize"])
        let headers = ["Sec-CH-DPR": "1.2"]
        let (overrides, read) = try profile.resolve([], header: { headers[$0] })
        #expect(overrides == ["downsample": ["dpr": .number(1.5)]])
        #expect(read == ["Sec-CH-DPR", "DPR"])
        #expect(
            try profile.resolve([], header: { $0 == "DPR" ? "9" : nil }).overrides == [
                "downsample": ["dpr": .integer(2)]
            ])
        // A value in the URL wins over the header, and then no header was read.
        let chosen = try profile.resolve([("dpr", "1")], header: { headers[$0] })
        #expect(chosen.overrides.isEmpty && chosen.hints.isEmpty)
    }

    @Test(
        "every allowed value is checked when the profile loads; mistakes name the file and line",
        arguments: [
            (
                #"params { w = { 100, 20000 } }, fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "test.lua:2: size = param \"w\" with w = 20000: downsample: 'size' must be"
            ),
            (
                #"params { f = { "jpeg", "bmp" } }, fetch {}, decode {}, encode { format = param "f" }"#,
                "test.lua:2: format = param \"f\" with f = bmp: encode:"
            ),
            (
                #"fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "test.lua:2: param \"w\": no such option; declare it first"
            ),
            (#"params { w = { 100 } }, fetch {}, decode {}, encode {}"#, "test.lua:2: params: option w is not used"),
            (
                #"fetch {}, params { w = { 100 } }, decode {}, downsample { size = param "w" }, encode {}"#,
                "test.lua:2: params comes first"
            ),
            (
                #"params { w = { 100, 200, default = 150 } }, fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "params: w: default 150 is not one of its values"
            ),
            (
                #"params { w = { 100, 100 } }, fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "params: w: lists a value twice"
            ),
            (
                #"params { w = { "a/b" } }, fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "params: w: a string value uses only"
            ),
            (
                #"params { w = { from = 1, to = 1e6, step = 1 } }, fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "params: w: a range may hold at most 1000 values"
            ),
            (
                #"params { w = { 100, hint = "Viewport" } }, fetch {}, decode {}, downsample { size = param "w" }, encode {}"#,
                "params: w: hint is \"Width\" or \"DPR\""
            ),
            (
                #"params { q = { 50, 60 } }, fetch {}, decode {}, encode { quality = param "q" }, cache {}, encode { quality = 10 }"#,
                "encode stands twice"
            ),
        ])
    func loadErrors(_ body: String, _ message: String) throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load("profile \"p\" {\n  \(body),\n}\n") }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }
}
