/// Checks the parameters written for one stage (in a profile file, or a per-request override)
/// against the stage's schema.
package struct ParameterChecker {
    let definition: StageDefinition

    package init(definition: StageDefinition) { self.definition = definition }

    /// The loader adds file and line to the ParameterError this throws.
    package func check(_ written: WrittenTable) throws(ParameterError) -> StageParameters {
        let name = definition.name
        if !written.array.isEmpty || written.otherKeys > 0 {
            throw ParameterError("\(name): parameters must be named, like \(name) { \(example) }")
        }
        let specs = Dictionary(uniqueKeysWithValues: definition.parameters.map { ($0.name, $0) })
        var values: [String: ParameterValue] = [:]
        for key in written.fields.keys.sorted() {
            guard let spec = specs[key] else {
                let hint = Suggestion.hint(for: key, in: specs.keys.sorted())
                let known = definition.parameters.isEmpty ? " (it takes none)" : hint
                throw ParameterError("\(name): unknown parameter '\(key)'\(known)")
            }
            values[key] = try convert(written.fields[key]!, to: spec)
        }
        let explicit = Set(values.keys)
        for spec in definition.parameters where values[spec.name] == nil {
            values[spec.name] = spec.defaultValue
        }
        return StageParameters(values: values, explicit: explicit)
    }

    private var example: String {
        guard let first = definition.parameters.first else { return "" }
        return "\(first.name) = \(first.defaultValue?.description ?? "...")"
    }

    private func convert(_ value: WrittenValue, to spec: ParameterSpec) throws(ParameterError) -> ParameterValue {
        let subject = "\(definition.name): '\(spec.name)'"
        func mismatch() -> ParameterError {
            ParameterError(
                "\(subject) must be \(Self.article(for: spec.type)), got \(value.typeName)\(Self.shown(value))")
        }
        switch spec.type {
        case .number(let range):
            let number: Double
            switch value {
            case .integer(let v): number = Double(v)
            case .number(let v): number = v
            default: throw mismatch()
            }
            guard range.contains(number) else {
                throw ParameterError(
                    "\(subject) must be between \(ParameterValue.number(range.lowerBound)) and \(ParameterValue.number(range.upperBound)), got \(ParameterValue.number(number))"
                )
            }
            return .number(number)
        case .integer(let range):
            let integer: Int
            switch value {
            case .integer(let v): integer = Int(v)
            case .number(let v) where v == v.rounded() && abs(v) < 1e15: integer = Int(v)
            case .number:
                throw ParameterError(
                    "\(subject) must be a whole number, got \(ParameterValue.number(value.asDouble ?? 0))")
            default: throw mismatch()
            }
            guard range.contains(integer) else {
                throw ParameterError(
                    "\(subject) must be between \(range.lowerBound) and \(range.upperBound), got \(integer)")
            }
            return .integer(integer)
        case .boolean:
            guard case .boolean(let v) = value else { throw mismatch() }
            return .boolean(v)
        case .string:
            guard case .string(let v) = value else { throw mismatch() }
            return .string(v)
        case .environmentVariable:
            guard case .string(let v) = value else { throw mismatch() }
            if let problem = EnvironmentAccess.problem(v) { throw ParameterError("\(subject): \(problem)") }
            return .string(v)
        case .choice(let options):
            guard case .string(let v) = value else { throw mismatch() }
            guard options.contains(v) else {
                throw ParameterError(
                    "\(subject) must be one of \(spec.type), got \"\(v)\"\(Suggestion.hint(for: v, in: options))")
            }
            return .string(v)
        case .stringList:
            guard case .table(let table) = value, table.fields.isEmpty, table.otherKeys == 0 else { throw mismatch() }
            var strings: [String] = []
            for item in table.array {
                guard case .string(let s) = item else { throw mismatch() }
                strings.append(s)
            }
            return .stringList(strings)
        case .numberList(let range, let count):
            guard case .table(let table) = value, table.fields.isEmpty, table.otherKeys == 0, table.array.count == count
            else {
                throw mismatch()
            }
            var numbers: [Double] = []
            for item in table.array {
                guard let number = item.asDouble else { throw mismatch() }
                guard range.contains(number) else {
                    throw ParameterError(
                        "\(subject) takes numbers between \(ParameterValue.number(range.lowerBound)) and \(ParameterValue.number(range.upperBound)), got \(ParameterValue.number(number))"
                    )
                }
                numbers.append(number)
            }
            return .numberList(numbers)
        }
    }

    private static func article(for type: ParameterSpec.ValueType) -> String {
        switch type {
        case .number(let r):
            "a number from \(ParameterValue.number(r.lowerBound)) to \(ParameterValue.number(r.upperBound))"
        case .integer(let r): "a whole number from \(r.lowerBound) to \(r.upperBound)"
        case .boolean: "true or false"
        case .string, .environmentVariable: "a string"
        case .choice: "one of \(type)"
        case .stringList: "a list of strings, like { \"a\", \"b\" }"
        case .numberList(let r, let count):
            "a list of \(count) numbers from \(ParameterValue.number(r.lowerBound)) to \(ParameterValue.number(r.upperBound)), like { \((0..<count).map { _ in ParameterValue.number(r.lowerBound).description }.joined(separator: ", ")) }"
        }
    }

    private static func shown(_ value: WrittenValue) -> String {
        switch value {
        case .string(let s): " (\"\(s.prefix(40))\")"
        case .integer(let v): " (\(v))"
        case .number(let v): " (\(ParameterValue.number(v)))"
        case .boolean(let v): " (\(v))"
        default: ""
        }
    }
}
