import ArgumentParser
import PipelineHost

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a profile file and print each profile's stages with resolved parameters.",
        discussion: "Exit code 0 when the file is valid, 2 with a file:line error when it is not.")

    @Argument(help: "The Lua profile file.")
    var profileFile: String

    @OptionGroup(title: "Profiles")
    var access: ProfileAccessOptions

    func run() throws {
        try access.apply()
        let set = try loadProfiles(profileFile)
        printOutput("\(set.file): \(set.profiles.count) profile\(set.profiles.count == 1 ? "" : "s"), OK")
        for profile in set.profiles {
            printOutput("")
            printOutput("profile \"\(profile.name)\" (line \(profile.line))")
            for option in profile.options {
                let hint = option.hint.map { ", or from the \($0.rawValue) header" } ?? ""
                let uses = option.uses.map { "\($0.stage).\($0.parameter)" }.joined(separator: ", ")
                printOutput(
                    "  param \(option.name): \(option.spellings.joined(separator: ", ")) (default \(ProfileOption.spelling(of: option.defaultValue))\(hint)) -> \(uses)"
                )
            }
            if !profile.options.isEmpty {
                printOutput(
                    "  \(profile.variantCount.map(String.init) ?? "more than \(Int.max)") variants of each source")
            }
            // The settings the profile writes (info, fallback) follow its chain.
            let written = [profile.info, profile.fallback].compactMap { $0 }.filter { !$0.parameters.explicit.isEmpty }
            let entries = profile.stages + written
            let width = entries.map(\.name.count).max() ?? 0
            for stage in entries {
                let name = stage.name.padded(to: width)
                let parameters = stage.parameters.values.keys.sorted().map { key in
                    let value = stage.parameters.values[key]!
                    return stage.parameters.explicit.contains(key) ? "\(key)=\(value)" : "\(key)=\(value) (default)"
                }
                printOutput("  line \(stage.line)\t\(name)  \(parameters.joined(separator: ", "))")
            }
        }
    }
}
