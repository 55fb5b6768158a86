import ArgumentParser
import Foundation
import PipelineHost

struct Stages: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stages",
        abstract: "List every registered stage with its parameters, types, defaults and docs.",
        discussion: "With --json, the same as one JSON document for tools: the plugin API version, and each stage's "
            + "name, plugin, version, summary, input and output, and each parameter's name, type (with its range or "
            + "choices), default and doc.")

    @Flag(name: .long, help: "Print one JSON document instead of text.")
    var json = false

    @Flag(name: .long, help: "Print the Markdown reference (docs/STAGES.md is this output).")
    var markdown = false

    func run() throws {
        let registry = try makeRegistry()
        if markdown {
            printOutput(StageReference.markdown(registry), terminator: "")
            return
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let document = StageListJSON(registry)
            printOutput(String(decoding: try encoder.encode(document), as: UTF8.self))
            return
        }
        for name in registry.names {
            let definition = registry[name]!
            printOutput("\(name)  (\(definition.input) -> \(definition.output))")
            printOutput("  \(definition.summary)")
            for p in definition.parameters {
                let fallback = p.defaultValue.map { "default \($0)" } ?? "optional"
                printOutput("    \(p.name.padded(to: 16)) \(p.type)  [\(fallback)]")
                printOutput("    \(String(repeating: " ", count: 16)) \(p.doc)")
            }
            printOutput("")
        }
        for (name, reason) in registry.planned.sorted(by: { $0.key < $1.key }) {
            printOutput("\(name)  (not available yet: \(reason))")
        }
    }
}

/// `stages --json`: the registry as tools read it.
struct StageListJSON: Encodable {
    struct Stage: Encodable {
        let name: String
        /// The plugin that registered it.
        let plugin: String?
        let version: Int
        let summary: String
        let input: String
        let output: String
        let parameters: [Parameter]
    }

    struct Parameter: Encodable {
        let name: String
        /// "number", "integer", "boolean", "string", "choice", "string_list" or "number_list".
        let type: String
        /// The lowest and highest value of a number or integer (of each item of a number list).
        let range: [Double]?
        let choices: [String]?
        /// How many items a number list holds.
        let count: Int?
        /// The default as a profile would write it; absent when the parameter is optional.
        let `default`: String?
        let doc: String
    }

    /// The plugin API this build provides ("1.2").
    let pluginAPIVersion: String
    let stages: [Stage]
    let planned: [String: String]

    enum CodingKeys: String, CodingKey {
        case pluginAPIVersion = "plugin_api_version"
        case stages, planned
    }

    init(_ registry: StageRegistry) {
        stages = registry.names.map { name in
            let definition = registry[name]!
            return Stage(
                name: name, plugin: registry.owners[name], version: definition.version, summary: definition.summary,
                input: "\(definition.input)", output: "\(definition.output)",
                parameters: definition.parameters.map(Self.parameter))
        }
        planned = registry.planned
        pluginAPIVersion = PluginAPIVersion.current.description
    }

    static func parameter(_ spec: ParameterSpec) -> Parameter {
        let type: String, range: [Double]?, choices: [String]?, count: Int?
        switch spec.type {
        case .number(let r): (type, range, choices, count) = ("number", [r.lowerBound, r.upperBound], nil, nil)
        case .integer(let r):
            (type, range, choices, count) = ("integer", [Double(r.lowerBound), Double(r.upperBound)], nil, nil)
        case .boolean: (type, range, choices, count) = ("boolean", nil, nil, nil)
        case .string: (type, range, choices, count) = ("string", nil, nil, nil)
        case .environmentVariable: (type, range, choices, count) = ("environment_variable", nil, nil, nil)
        case .choice(let options): (type, range, choices, count) = ("choice", nil, options, nil)
        case .stringList: (type, range, choices, count) = ("string_list", nil, nil, nil)
        case .numberList(let r, let n):
            (type, range, choices, count) = ("number_list", [r.lowerBound, r.upperBound], nil, n)
        }
        return Parameter(
            name: spec.name, type: type, range: range, choices: choices, count: count,
            default: spec.defaultValue?.description, doc: spec.doc)
    }
}
