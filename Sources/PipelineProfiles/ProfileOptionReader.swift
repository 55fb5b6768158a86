import PipelineHost

/// Reads a profile's `params { ... }` and its `param "w"` references:
///
///     params { w = { 100, 300, 600, default = 300 }, q = { from = 60, to = 90, step = 10, default = 80 },
///              dpr = { 1, 2, 3, default = 1, hint = "DPR" } }
///     downsample { size = param "w" }
///
/// An option's values are a list of numbers or of short strings, or a range `from`, `to`,
/// `step`; `default` (else the first value) must be one of them; `hint` ("Width" or "DPR")
/// lets a request header choose when the URL does not.
enum ProfileOptionReader {
    /// An option as declared, before the loader knows where it is used.
    struct Declared {
        let name: String
        let values: [ParameterValue]
        let defaultValue: ParameterValue
        let hint: ProfileOption.Hint?
    }

    /// A `param "w"` written as a stage parameter.
    struct Reference {
        let parameter: String
        let option: String
        let line: Int
    }

    /// Most values one option may allow: each is a variant to compute and to store.
    static let maxValues = 1000

    /// The `params` entry's fields and line, when `item` is one.
    static func params(_ item: LuaValue) -> (LuaTable, Int)? {
        guard case .table(let descriptor) = item, case .descriptorMarker = descriptor[4],
            case .string("params") = descriptor[1],
            case .integer(let line) = descriptor[2], case .table(let fields) = descriptor[3]
        else { return nil }
        return (fields, Int(line))
    }

    static func options(from table: LuaTable, line: Int, file: String) throws(ProfileError) -> [Declared] {
        guard table.array.isEmpty, table.otherKeys == 0 else {
            throw ProfileError(
                file: file, line: line, "params: options are named, like params { w = { 100, 300, default = 300 } }")
        }
        var declared: [Declared] = []
        for name in table.fields.keys.sorted() {
            if let problem = ProfileGrammar.optionNameProblem(name) {
                throw ProfileError(
                    file: file, line: line, "params: option name \"\(Redactor.escapingControls(name))\" \(problem)")
            }
            guard case .table(let spec) = table.fields[name]! else {
                throw ProfileError(
                    file: file, line: line,
                    "params: \(name) must be a table, like \(name) = { 100, 300, default = 300 }")
            }
            do {
                declared.append(try option(name, spec))
            } catch {
                throw ProfileError(file: file, line: line, "params: \(name): \(error.message)")
            }
        }
        return declared
    }

    private static func option(_ name: String, _ spec: LuaTable) throws(ParameterError) -> Declared {
        let known: Set<String> = ["default", "from", "to", "step", "hint"]
        if let unknown = spec.fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw ParameterError(
                "unknown field '\(unknown)' (an option takes a list of values or from/to/step, and default and hint)")
        }
        var values: [ParameterValue] = []
        if spec.fields["from"] != nil || spec.fields["to"] != nil || spec.fields["step"] != nil {
            guard spec.array.isEmpty, let from = number(spec.fields["from"]), let to = number(spec.fields["to"]),
                let step = number(spec.fields["step"]), step > 0, to >= from
            else {
                throw ParameterError("a range needs numbers from <= to and step > 0, and no list")
            }
            guard (to - from) / step < Double(maxValues) else {
                throw ParameterError("a range may hold at most \(maxValues) values")
            }
            var value = from
            while value <= to + step * 1e-9 {
                values.append(canonical(value))
                value = from + step * Double(values.count)
            }
        } else {
            values = try spec.array.map { item throws(ParameterError) in try Self.value(item) }
        }
        guard !values.isEmpty else { throw ParameterError("needs at least one value") }
        guard values.count <= maxValues else { throw ParameterError("may allow at most \(maxValues) values") }
        guard Set(values).count == values.count else { throw ParameterError("lists a value twice") }
        let strings = values.filter { if case .string = $0 { true } else { false } }.count
        guard strings == 0 || strings == values.count else {
            throw ParameterError("values are all numbers or all strings")
        }
        let defaultValue =
            try spec.fields["default"].map { item throws(ParameterError) in try Self.value(item) } ?? values[0]
        guard values.contains(defaultValue) else {
            throw ParameterError("default \(ProfileOption.spelling(of: defaultValue)) is not one of its values")
        }
        var hint: ProfileOption.Hint?
        if let written = spec.fields["hint"] {
            guard case .string(let header) = written,
                let known = ProfileOption.Hint.allCases.first(where: { $0.rawValue == header })
            else {
                throw ParameterError("hint is \"Width\" or \"DPR\"")
            }
            guard strings == 0 else { throw ParameterError("a hint needs numeric values") }
            hint = known
        }
        return Declared(name: name, values: values, defaultValue: defaultValue, hint: hint)
    }

    /// A number or a short URL-safe string; integral numbers are integers, so 300 and 300.0 are one value.
    private static func value(_ item: LuaValue) throws(ParameterError) -> ParameterValue {
        switch item {
        case .integer(let v): return .integer(Int(v))
        case .number(let v) where v.isFinite: return canonical(v)
        case .string(let text):
            if let problem = ProfileGrammar.optionStringProblem(text) { throw ParameterError(problem) }
            return .string(text)
        default: throw ParameterError("values are numbers or strings, got \(item.typeName)")
        }
    }

    private static func number(_ item: LuaValue?) -> Double? {
        switch item {
        case .integer(let v)?: Double(v)
        case .number(let v)? where v.isFinite: v
        default: nil
        }
    }

    private static func canonical(_ value: Double) -> ParameterValue {
        value == value.rounded() && abs(value) < 1e15 ? .integer(Int(value)) : .number(value)
    }

    /// The `param "w"` references among a stage's written parameters.
    static func references(in written: LuaTable) -> [Reference] {
        written.fields.keys.sorted().compactMap { parameter in
            guard case .table(let marker) = written.fields[parameter]!, case .parameterMarker = marker[4],
                case .string(let option) = marker[1], case .integer(let line) = marker[2]
            else { return nil }
            return Reference(parameter: parameter, option: option, line: Int(line))
        }
    }
}
