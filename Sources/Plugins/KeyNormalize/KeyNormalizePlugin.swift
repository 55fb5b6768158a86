import PipelineHost

/// Registers `normalize`: derives the stable key from the source, leaving the fetch URL alone.
public enum KeyNormalizePlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(StageDefinition(
            name: "normalize",
            summary: "Derive the stable cache and dedup key: lower-case scheme and host, no default port, "
                + "no fragment or credentials, sorted query, listed parameters dropped. The fetch still uses the full URL.",
            input: .source, output: .source,
            parameters: [
                ParameterSpec("drop_query", .stringList, default: .stringList([]),
                              doc: "query parameters left out of the key and redacted in output, e.g. { \"u\", \"t\", \"s\", \"p\" }"),
            ],
            make: { NormalizeStage(dropped: Set($0.strings("drop_query") ?? [])) }))
    }
}

struct NormalizeStage: Stage {
    let dropped: Set<String>

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        guard case .source(var source) = input else { throw PipelineError(.stageFailed, "normalize: expected a source") }
        source.key = try SourceKey.normalized(source.location, dropping: dropped)
        source.volatileParameters.formUnion(dropped)
        return .source(source)
    }
}
