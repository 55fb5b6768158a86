import PipelineHost
import Testing
import TestSupport

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
        #expect(canonical.contains("timeout=5") && canonical.contains("retries=2") && canonical.contains("block_private=false"))
        #expect(canonical.contains(#"schemes={"http","https","file"}"#))
    }
}
