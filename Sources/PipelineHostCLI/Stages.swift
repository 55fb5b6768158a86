import ArgumentParser
import PipelineHost

struct Stages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every registered stage with its parameters, types, defaults and docs.")

    func run() throws {
        let registry = try makeRegistry()
        for name in registry.names {
            let definition = registry[name]!
            print("\(name)  (\(definition.input) -> \(definition.output))")
            print("  \(definition.summary)")
            for p in definition.parameters {
                let fallback = p.defaultValue.map { "default \($0)" } ?? "optional"
                print("    \(p.name.padded(to: 16)) \(p.type)  [\(fallback)]")
                print("    \(String(repeating: " ", count: 16)) \(p.doc)")
            }
            print("")
        }
        for (name, reason) in registry.planned.sorted(by: { $0.key < $1.key }) {
            print("\(name)  (not available yet: \(reason))")
        }
    }
}
