/// Type-checks a profile's chain: each stage must take what the one before gives, the chain
/// starts from a source and must end in encoded bytes. Errors say which stage to add.
package struct ChainChecker {
    let registry: StageRegistry

    package init(registry: StageRegistry) { self.registry = registry }

    /// Returns nil when the chain is sound, else the message and the line it belongs to.
    package func problem(in stages: [ConfiguredStage], profile: String, profileLine: Int) -> (
        line: Int, message: String
    )? {
        guard !stages.isEmpty else {
            return (profileLine, "profile \"\(profile)\" has no stages")
        }
        var kind = ValueKind.source
        var previous: String?
        var found: Set<String> = []
        for stage in stages {
            if let needed = stage.definition.capabilities.needsFound?(stage.parameters), !found.contains(needed) {
                return (stage.line, "\(stage.name) needs \(needed) found before it: \(finder(of: needed))")
            }
            if let finds = stage.definition.capabilities.finds { found.insert(finds) }
            if stage.definition.role == .cache, previous == stage.name {
                return (stage.line, "\(stage.name) directly after \(stage.name); merge their parameters into one")
            }
            let wanted = stage.definition.input
            if wanted != kind {
                let from = previous.map { " from '\($0)'" } ?? ""
                var message = "\(stage.name) needs \(wanted) but gets \(kind)\(from)"
                if wanted == .source {
                    message += "; key and request stages like '\(stage.name)' must come before fetch"
                } else if let bridge = bridge(from: kind, to: wanted) {
                    message += "; add \(bridge) before it"
                }
                return (stage.line, message)
            }
            kind = stage.definition.output
            previous = stage.name
        }
        guard kind == .encoded else {
            let fix = bridge(from: kind, to: .encoded).map { "; add \($0) at the end" } ?? ""
            return (stages.last!.line, "profile \"\(profile)\" ends with \(kind), not encoded bytes\(fix)")
        }
        return nil
    }

    /// The advice for a chain that needs `finding`: the stage to add, or that this build has none.
    private func finder(of finding: String) -> String {
        let finders = registry.definitions.values.filter { $0.capabilities.finds == finding }.map(\.name).sorted()
        if let name = finders.first { return "add \(name) {} before it" }
        let planned = registry.planned[finding].map { " (\($0))" } ?? ""
        return "this pipelinehost has no stage that finds \(finding)\(planned)"
    }

    /// The stage that turns `from` into `to`, preferring the built-in names.
    private func bridge(from: ValueKind, to: ValueKind) -> String? {
        let candidates = registry.definitions.values.filter { $0.input == from && $0.output == to }.map(\.name)
        return ["fetch", "decode", "encode"].first(where: candidates.contains) ?? candidates.sorted().first
    }
}
