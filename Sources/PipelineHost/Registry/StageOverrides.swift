extension ConfiguredStage {
    /// The same stage with some parameters replaced for one request, checked against the same
    /// schema as the profile file (ranges, choices, unknown names).
    package func overriding(_ changes: [String: ParameterValue]) throws(ParameterError) -> ConfiguredStage {
        let checker = ParameterChecker(definition: definition)
        var written = WrittenTable()
        for (name, value) in parameters.values where parameters.explicit.contains(name) {
            written.fields[name] = WrittenValue(value)
        }
        for (name, value) in changes { written.fields[name] = WrittenValue(value) }
        var checked = try checker.check(written)
        checked.profileFile = parameters.profileFile
        do {
            return ConfiguredStage(
                definition: definition, parameters: checked, line: line, stage: try definition.make(checked))
        } catch let error as ParameterError {
            throw error
        } catch {
            throw ParameterError("\(error)")
        }
    }
}
