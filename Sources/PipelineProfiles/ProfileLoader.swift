import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a Lua profile file in the sandbox and turns it into type-checked profiles. Every mistake
/// becomes a `ProfileError` that names the file and, when there is one, the line.
public struct ProfileLoader: Sendable {
    /// The stages profiles may use.
    public let registry: StageRegistry
    /// The sandbox's limits.
    public var limits: ProfileLimits

    /// A loader for profiles that use `registry`'s stages.
    public init(registry: StageRegistry, limits: ProfileLimits = ProfileLimits()) {
        self.registry = registry
        self.limits = limits
    }

    /// The largest profile file read: a profile is a page of Lua, and what it declares is held
    /// to 16 MB anyway.
    static let maxFileBytes = 16 << 20

    /// Loads and checks the profile file at `path`.
    public func load(file path: String) throws(ProfileError) -> ProfileSet {
        let code: [UInt8]
        do {
            code = try BoundedFile.read(path, maxBytes: Self.maxFileBytes)
        } catch {
            throw ProfileError(file: path, line: nil, "cannot load profile: the file \(error)")
        }
        return try load(code: code, name: path)
    }

    /// Loads profile text; `name` stands for the file in messages.
    public func load(code: [UInt8], name: String) throws(ProfileError) -> ProfileSet {
        let declared: LuaValue
        do {
            let sandbox = try LuaSandbox(globals: registry.callableNames, limits: limits)
            try sandbox.run(code, chunkName: "@" + name)
            do {
                declared = try sandbox.profiles()
            } catch {
                throw ProfileError(file: name, line: nil, error.message)
            }
        } catch let error as LuaSandbox.RunFailure {
            switch error {
            case .outOfMemory:
                throw ProfileError(
                    file: name, line: nil, "profile exceeded the memory limit (\(limits.memoryBytes >> 20) MB)")
            case .message(let message):
                throw Self.error(fromLua: message, file: name)
            }
        } catch let error as ProfileError {
            throw error
        } catch {
            throw ProfileError(file: name, line: nil, "\(error)")
        }
        guard case .table(let entries) = declared else {
            throw ProfileError(file: name, line: nil, "internal error: no profile list")
        }
        var profiles: [Profile] = []
        // Each name's line, for the duplicate check: a scan of the earlier profiles made a file
        // of 10,000 profiles (allowed) quadratic.
        var lines: [String: Int] = [:]
        for case .table(let entry) in entries.array {
            let made = try profile(from: entry, file: name, earlier: lines)
            lines[made.name] = made.line
            profiles.append(made)
        }
        guard !profiles.isEmpty else {
            throw ProfileError(
                file: name, line: nil, "defines no profile; write profile \"name\" { fetch {}, decode {}, ... }")
        }
        return ProfileSet(file: name, profiles: profiles)
    }

    private func profile(from entry: LuaTable, file: String, earlier: [String: Int]) throws(ProfileError) -> Profile {
        guard case .string(let name) = entry[1], case .integer(let rawLine) = entry[2] else {
            throw ProfileError(file: file, line: nil, "internal error: malformed profile entry")
        }
        let line = Int(rawLine)
        if let problem = ProfileGrammar.profileNameProblem(name) {
            throw ProfileError(file: file, line: line, "profile name \"\(Redactor.escapingControls(name))\" \(problem)")
        }
        if let first = earlier[name] {
            throw ProfileError(file: file, line: line, "profile \"\(name)\" is already defined at line \(first)")
        }
        guard case .table(let list) = entry[3] else {
            throw ProfileError(
                file: file, line: line,
                "profile \"\(name)\" has no stage list; write profile \"\(name)\" { fetch {}, ... }")
        }
        if let key = list.fields.keys.sorted().first {
            throw ProfileError(
                file: file, line: line,
                "profile \"\(name)\": stages are a list, but found '\(key) = ...'; write \(key) { ... }")
        }
        var stages: [ConfiguredStage] = []
        var settings: [ProfileSetting: ConfiguredStage] = [:]
        var declared: [ProfileOptionReader.Declared] = [], paramsLine = line
        var uses: [String: [ProfileOption.Use]] = [:]
        for (index, item) in list.array.enumerated() {
            if let (fields, at) = ProfileOptionReader.params(item) {
                guard index == 0 else { throw ProfileError(file: file, line: at, "params comes first in a profile") }
                declared = try ProfileOptionReader.options(from: fields, line: at, file: file)
                paramsLine = at
                continue
            }
            let (entry, references) = try stage(
                from: item, position: index + 1, profile: name, file: file, profileLine: line,
                options: declared)
            for reference in references {
                if let twin = stages.first(where: { $0.name == entry.name }) {
                    throw ProfileError(
                        file: file, line: reference.line,
                        "\(entry.name) also stands at line \(twin.line); "
                            + "a param may set a stage the profile has once")
                }
                uses[reference.option, default: []].append(
                    ProfileOption.Use(stage: entry.name, parameter: reference.parameter))
            }
            if !references.isEmpty, list.array[(index + 1)...].contains(where: { Self.stageName($0) == entry.name }) {
                throw ProfileError(
                    file: file, line: entry.line,
                    "\(entry.name) stands twice in profile \"\(name)\"; a param may set a stage the profile has once")
            }
            guard let setting = entry.definition.capabilities.profileSetting else {
                stages.append(entry)
                continue
            }
            if let first = settings[setting] {
                throw ProfileError(
                    file: file, line: entry.line, "\(entry.name) is already set at line \(first.line); write it once")
            }
            settings[setting] = entry
        }
        if let problem = ChainChecker(registry: registry).problem(in: stages, profile: name, profileLine: line) {
            throw ProfileError(file: file, line: problem.line, problem.message)
        }
        var info = settings[.info]
        if info == nil { info = try defaultSetting(.info, file: file, line: line) }
        let options = try declared.map { option throws(ProfileError) -> ProfileOption in
            guard let used = uses[option.name] else {
                throw ProfileError(
                    file: file, line: paramsLine,
                    "params: option \(option.name) is not used; write a stage parameter as param \"\(option.name)\"")
            }
            return ProfileOption(
                name: option.name, values: option.values, defaultValue: option.defaultValue, hint: option.hint,
                uses: used)
        }
        return Profile(
            name: name, file: file, line: line, stages: stages, info: info, declaresInfo: settings[.info] != nil,
            fallback: settings[.fallback], options: options)
    }

    /// The stage name of a descriptor, if `item` is one.
    private static func stageName(_ item: LuaValue) -> String? {
        guard case .table(let descriptor) = item, case .string(let name) = descriptor[1] else { return nil }
        return name
    }

    /// The registry's stage for `setting` with its defaults, for a profile that does not write it.
    private func defaultSetting(_ setting: ProfileSetting, file: String, line: Int) throws(ProfileError)
        -> ConfiguredStage?
    {
        guard let definition = registry.definitions.values.first(where: { $0.capabilities.profileSetting == setting })
        else { return nil }
        do {
            var parameters = try ParameterChecker(definition: definition).check(WrittenTable())
            parameters.profileFile = file
            return ConfiguredStage(
                definition: definition, parameters: parameters, line: line, stage: try definition.make(parameters))
        } catch {
            throw ProfileError(file: file, line: line, "\(definition.name): \(error)")
        }
    }

    private func stage(
        from item: LuaValue, position: Int, profile: String, file: String, profileLine: Int,
        options: [ProfileOptionReader.Declared]
    ) throws(ProfileError) -> (ConfiguredStage, [ProfileOptionReader.Reference]) {
        guard case .table(let descriptor) = item, case .descriptorMarker = descriptor[4],
            case .string(let stageName) = descriptor[1], case .integer(let rawLine) = descriptor[2],
            case .table(let written) = descriptor[3]
        else {
            let advice = if case .function = item { "; call it with a table, like decode {}" } else { "" }
            throw ProfileError(
                file: file, line: profileLine,
                "profile \"\(profile)\": entry \(position) is \(item.typeName), not a stage\(advice)")
        }
        let line = Int(rawLine)
        guard let definition = registry[stageName] else {
            let reason = registry.planned[stageName] ?? "no such stage"
            throw ProfileError(file: file, line: line, "\(stageName): \(reason)")
        }
        // A `param "w"` stands for the option's default here; every other value is checked below.
        let references = ProfileOptionReader.references(in: written)
        var table = written.written
        for reference in references {
            guard definition.capabilities.profileSetting == nil else {
                throw ProfileError(
                    file: file, line: reference.line, "\(stageName): a profile setting cannot take a param")
            }
            guard let option = options.first(where: { $0.name == reference.option }) else {
                let declared =
                    options.isEmpty
                    ? "; declare it first: params { \(reference.option) = { ... } }"
                    : " (params declares \(options.map(\.name).joined(separator: ", ")))"
                throw ProfileError(
                    file: file, line: reference.line,
                    "param \"\(Redactor.escapingControls(reference.option))\": no such option\(declared)")
            }
            table.fields[reference.parameter] = WrittenValue(option.defaultValue)
        }
        let configured = try make(definition, table, file: file, line: line)
        for reference in references {
            let option = options.first { $0.name == reference.option }!
            for value in option.values where value != option.defaultValue {
                var each = table
                each.fields[reference.parameter] = WrittenValue(value)
                do {
                    _ = try make(definition, each, file: file, line: reference.line)
                } catch {
                    throw ProfileError(
                        file: file, line: reference.line,
                        "\(reference.parameter) = param \"\(option.name)\" with "
                            + "\(option.name) = \(ProfileOption.spelling(of: value)): \(error.message)")
                }
            }
        }
        return (configured, references)
    }

    private func make(_ definition: StageDefinition, _ table: WrittenTable, file: String, line: Int)
        throws(ProfileError) -> ConfiguredStage
    {
        let stageName = definition.name
        do {
            var parameters = try ParameterChecker(definition: definition).check(table)
            parameters.profileFile = file
            let stage = try definition.make(parameters)
            return ConfiguredStage(definition: definition, parameters: parameters, line: line, stage: stage)
        } catch let error as ParameterError {
            let message = error.message.hasPrefix("\(stageName):") ? error.message : "\(stageName): \(error.message)"
            throw ProfileError(file: file, line: line, message)
        } catch {
            throw ProfileError(file: file, line: line, "\(stageName): \(error)")
        }
    }

    /// Lua reports "chunk:line: message". The chunk name may be shortened for long paths, so the
    /// file is taken from the caller and only the line from the message.
    static func error(fromLua message: String, file: String) -> ProfileError {
        if let match = message.firstMatch(of: /:(\d+):\s/), let line = Int(match.output.1) {
            return ProfileError(file: file, line: line, String(message[match.range.upperBound...]))
        }
        return ProfileError(file: file, line: nil, message)
    }
}
