extension ConfiguredStage {
    /// The same stage with some parameters replaced for one request, checked against the same
    /// schema as the profile file (ranges, choices, unknown names).
    func overriding(_ changes: [String: ParameterValue]) throws(ParameterError) -> ConfiguredStage {
        let checker = ParameterChecker(definition: definition)
        var written = LuaTable()
        for (name, value) in parameters.values where parameters.explicit.contains(name) {
            written.fields[name] = LuaValue(value)
        }
        for (name, value) in changes { written.fields[name] = LuaValue(value) }
        let checked = try checker.check(written)
        do {
            return ConfiguredStage(definition: definition, parameters: checked, line: line, stage: try definition.make(checked))
        } catch let error as ParameterError {
            throw error
        } catch {
            throw ParameterError("\(error)")
        }
    }
}

extension LuaValue {
    /// The Lua value a profile would have written to get `value`.
    init(_ value: ParameterValue) {
        switch value {
        case .number(let v): self = .number(v)
        case .integer(let v): self = .integer(Int64(v))
        case .boolean(let v): self = .boolean(v)
        case .string(let v): self = .string(v)
        case .stringList(let v): self = .table(LuaTable(array: v.map { .string($0) }))
        }
    }
}
