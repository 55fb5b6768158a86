import PipelineHost
import TestSupport
import Testing

/// A parameter declared once as a typed key: its spec is what the loader checks, and a stage
/// reads it back typed, with its default and without force unwraps.
@Suite("Typed stage parameters")
struct TypedParameterTests {
    static let timeout = Parameter<Double>("timeout", .number(0.1...600), default: 30, doc: "seconds")
    static let retries = Parameter<Int>("retries", .integer(0...10), default: 2, doc: "attempts")
    static let schemes = Parameter<[String]>("schemes", .stringList, default: ["http", "https"], doc: "schemes")
    static let label = OptionalParameter<String>("label", .string, doc: "a label")

    @Test("a written value reads typed; a left-out one reads as its default; an optional one as nil")
    func reads() throws {
        let written = StageParameters(values: ["timeout": .integer(5), "retries": .integer(0), "label": .string("x")])
        #expect(written[Self.timeout] == 5, "an integer is a number too")
        #expect(written[Self.retries] == 0)
        #expect(written[Self.label] == "x")
        let empty = StageParameters()
        #expect(empty[Self.timeout] == 30 && empty[Self.retries] == 2 && empty[Self.schemes] == ["http", "https"])
        #expect(empty[Self.label] == nil)
    }

    @Test("the spec carries the default as written, so a stage's identity does not change")
    func specs() {
        #expect(Self.timeout.spec.defaultValue == .number(30))
        #expect(Self.retries.spec.defaultValue == .integer(2))
        #expect(Self.schemes.spec.defaultValue == .stringList(["http", "https"]))
        #expect(Self.label.spec.defaultValue == nil)
    }

    @Test("fetch, declared with typed keys, loads and keeps its identity")
    func fetchIdentity() throws {
        let set = try TestPipeline.load(#"profile "p" { fetch { timeout = 5 } }"#)
        let canonical = try #require(set["p"]?.stages.first?.parameters.canonical)
        #expect(
            canonical.contains("timeout=5") && canonical.contains("retries=2")
                && canonical.contains("block_private=false"))
        #expect(canonical.contains(#"schemes={"http","https","file"}"#))
    }

    enum Fit: String, ParameterChoice { case inside, cover, contain }

    struct Keys: ParameterList {
        let size = OptionalParameter<Int>("size", .integer(1...100), doc: "longest side")
        let fit = Parameter<Fit>("fit", default: .inside, doc: "how it fills the box")
        let sigma = Parameter<Double>("sigma", .number(0...10), default: 1, doc: "radius")
        /// Not a parameter: a list holds only what it declares as one.
        let note = "ignored"
    }

    @Test("a ParameterList gives its specs in declaration order, and reads each typed by key path")
    func parameterList() throws {
        #expect(Keys.specs.map(\.name) == ["size", "fit", "sigma"])
        #expect("\(Keys.specs[1].type)" == #""inside"|"cover"|"contain""#)
        #expect(Keys.specs[1].defaultValue == .string("inside"))
        let written = StageParameters(values: ["size": .integer(40), "fit": .string("cover")])
        #expect(written[\Keys.size] == 40 && written[\Keys.fit] == .cover && written[\Keys.sigma] == 1)
        let empty = StageParameters()
        #expect(empty[\Keys.size] == nil && empty[\Keys.fit] == .inside)
    }

    @Test("a choice loads from a profile as its case, and any other string is refused at load with file:line")
    func choiceFromProfile() throws {
        #expect(
            Fit.read(.string("contain")) == .contain && Fit.read(.string("fill")) == nil && Fit.read(.integer(1)) == nil
        )
        #expect(Fit.cover.written == .string("cover"))
        #expect(throws: ProfileError.self) {
            try TestPipeline.load(#"profile "p" { fetch {}, cache { on_error = "never" } }"#)
        }
        let loaded = try TestPipeline.load(#"profile "p" { fetch {}, cache { on_error = "stale" } }"#)
        #expect(loaded["p"]?.stages.last?.parameters.canonical.contains(#"on_error="stale""#) == true)
    }
}
