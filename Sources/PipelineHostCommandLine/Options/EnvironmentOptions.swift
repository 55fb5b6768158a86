import ArgumentParser
import Foundation

/// Every `serve` option can also come from the environment, as containers are configured:
/// `--cache-dir` from PIPELINEHOST_CACHE_DIR, `--allow-unsigned` from
/// PIPELINEHOST_ALLOW_UNSIGNED=true, a repeatable option from a comma-separated list. A flag on
/// the command line wins over its variable. The names are made from the options ArgumentParser
/// declares, so an option added to `serve` has its variable without a second list to keep.
///
/// The variables become arguments before parsing, so they are range-checked exactly as the flags
/// are; an error names the variable (`hinted`).
struct EnvironmentOptions: Equatable {
    /// The arguments with the environment's options put in after the subcommand's name.
    let arguments: [String]
    /// Each variable used, by the flag it set: "--port" → "PIPELINEHOST_PORT".
    let variables: [String: String]

    /// The variable for an option whose name is older than this rule.
    static let renamed = ["shared-cache": "PIPELINEHOST_REDIS"]

    /// The variable that sets `--name`.
    static func variable(for name: String) -> String {
        renamed[name] ?? "PIPELINEHOST_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// One option of a command, as ArgumentParser describes it.
    struct Declared: Equatable {
        let name: String
        let takesValue: Bool
        let repeats: Bool
    }

    /// `serve`'s options, from ArgumentParser's own description of the command (the JSON that
    /// `--experimental-dump-help` prints), help and version left out.
    static let serveOptions: [Declared] = declared(in: Serve._dumpHelp())

    static func declared(in dump: String) -> [Declared] {
        struct Dump: Decodable {
            struct Command: Decodable { let arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable {
                    let kind: String
                    let name: String
                }
                let kind: String
                let names: [Name]?
                let isRepeating: Bool?
            }
            let command: Command
        }
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(dump.utf8)) else { return [] }
        return (dump.command.arguments ?? []).compactMap { argument in
            guard argument.kind != "positional",
                let long = argument.names?.first(where: { $0.kind == "long" })?.name,
                long != "help", long != "version"
            else { return nil }
            return Declared(name: long, takesValue: argument.kind == "option", repeats: argument.isRepeating ?? false)
        }
    }

    /// `arguments` (without the program's name) with what `environment` sets for `serve`. Other
    /// subcommands are left as they are: a batch run reads its settings from its command line.
    static func apply(
        to arguments: [String], environment: [String: String]
    ) throws -> EnvironmentOptions {
        guard arguments.first == "serve" else { return EnvironmentOptions(arguments: arguments, variables: [:]) }
        // Read here, not as a default argument: a `run` never pays for the JSON.
        let options = serveOptions
        let given = Set(
            arguments.prefix { $0 != "--" }.compactMap { argument -> String? in
                guard argument.hasPrefix("--") else { return nil }
                return String(argument.dropFirst(2).prefix { $0 != "=" })
            })
        var added: [String] = []
        var variables: [String: String] = [:]
        for option in options where !given.contains(option.name) {
            let variable = variable(for: option.name)
            guard let value = environment[variable], !value.isEmpty else { continue }
            if option.takesValue {
                let values = option.repeats ? value.split(separator: ",").map { $0.trimmed } : [value]
                for each in values where !each.isEmpty { added += ["--" + option.name, each] }
            } else {
                switch value.lowercased() {
                case "1", "true", "yes", "on": added.append("--" + option.name)
                case "0", "false", "no", "off": continue
                default:
                    throw ValidationError("\(variable)=\(value): use true or false (it sets --\(option.name))")
                }
            }
            variables["--" + option.name] = variable
        }
        return EnvironmentOptions(arguments: [arguments[0]] + added + arguments.dropFirst(), variables: variables)
    }

    /// A parse error's message with " (set by PIPELINEHOST_PORT)" after its first line when that
    /// line names an option the environment set, so the operator knows which variable to fix.
    func hinted(_ message: String) -> String {
        let first = message.prefix { $0 != "\n" }
        let named = variables.filter { Self.names(String(first), $0.key) }
        guard !named.isEmpty else { return message }
        return first + " (set by " + named.values.sorted().joined(separator: ", ") + ")"
            + message.dropFirst(first.count)
    }
}

extension EnvironmentOptions {
    /// Whether `message` names `flag` itself, not a longer flag it begins ("--shared-cache" is
    /// not named by "--shared-cache-x").
    fileprivate static func names(_ message: String, _ flag: String) -> Bool {
        var rest = message[...]
        while let found = rest.range(of: flag) {
            let next = rest[found.upperBound...].first
            if next == nil || !(next!.isLetter || next! == "-") { return true }
            rest = rest[found.upperBound...]
        }
        return false
    }
}

extension Substring {
    fileprivate var trimmed: String { String(self).trimmingCharacters(in: .whitespaces) }
}
