import ArgumentParser
import PipelineHost

/// `--param name=value`: a profile option chosen on the command line, resolved by the same
/// `Profile.resolve` serve uses for a URL's option segments.
enum ParamOption {
    /// The `name=value` pairs, or a usage error.
    static func choices(_ written: [String]) throws -> [(name: Substring, value: Substring)] {
        try written.map { text in
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex,
                text.index(after: equals) != text.endIndex
            else {
                throw usageError("--param takes name=value, like --param w=600; got \"\(text)\"")
            }
            return (text[..<equals], text[text.index(after: equals)...])
        }
    }

    /// Each profile's overrides for the chosen options it declares. An option no chosen profile
    /// declares, or a value outside its set, is a usage error that lists what is allowed.
    static func overrides(_ written: [String], for profiles: [String], in set: ProfileSet) throws -> [String:
        StageChoices]
    {
        let choices = try choices(written)
        guard !choices.isEmpty else { return [:] }
        var result: [String: StageChoices] = [:]
        var declared = Set<Substring>()
        for name in profiles {
            guard let profile = set[name] else { continue }
            let own = choices.filter { choice in profile.options.contains { $0.name == choice.name } }
            declared.formUnion(own.map(\.name))
            do {
                result[name] = try profile.resolve(own).overrides
            } catch {
                throw usageError("--param: \(error.message)")
            }
        }
        if let stray = choices.first(where: { !declared.contains($0.name) }) {
            let offered = profiles.compactMap { set[$0] }.flatMap(\.options).map(\.name)
            printError(
                "error: --param \(stray.name): no option of that name in \(profiles.map { "\"\($0)\"" }.joined(separator: ", "))"
                    + (offered.isEmpty
                        ? " (they declare no params)" : " (options: \(Set(offered).sorted().joined(separator: ", ")))"))
            throw ExitCode.usage
        }
        return result
    }
}
