import PipelineHost

/// Registers `normalize`: derives the stable key from the source, leaving the fetch URL alone.
public enum KeyNormalizePlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "normalize",
                summary: "Derive the stable cache and dedup key: lower-case scheme and host, no default port, "
                    + "no fragment or credentials, sorted query, listed parameters dropped. The fetch still uses the full URL.",
                input: .source, output: .source,
                parameters: NormalizeStage.Keys.specs,
                make: {
                    NormalizeStage(
                        dropped: Set($0[\NormalizeStage.Keys.dropQuery]),
                        redacted: Set($0[\NormalizeStage.Keys.redactQuery]))
                }))
    }
}

struct NormalizeStage: SourceRewriter {
    struct Keys: ParameterList {
        let dropQuery = Parameter<[String]>(
            "drop_query", .stringList, default: [],
            doc: "query parameters left out of the key and redacted in output, e.g. { \"u\", \"t\", \"s\", \"p\" }")
        let redactQuery = Parameter<[String]>(
            "redact_query", .stringList, default: [],
            doc:
                "more query parameters to redact in output, kept in the key (names with token, key, sig, secret, password, auth, credential, session or jwt are always redacted)"
        )
    }

    let dropped: Set<String>
    let redacted: Set<String>

    var secretQueryNames: Set<String> { dropped.union(redacted) }

    func rewrite(_ source: Source) throws -> Source {
        var source = source
        source.key = try SourceKey.normalized(source.location, dropping: dropped)
        source.volatileParameters.formUnion(secretQueryNames)
        return source
    }
}
