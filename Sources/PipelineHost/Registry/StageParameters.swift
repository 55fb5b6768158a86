/// A stage's parameters after validation: every declared parameter with a default is present.
public struct StageParameters: Sendable, Hashable {
    public private(set) var values: [String: ParameterValue]
    /// The names the profile wrote itself, as opposed to defaults.
    public private(set) var explicit: Set<String>
    /// The profile file that wrote them, when one did: a stage reads a file it names relative
    /// to it (an overlay's image). Not part of the identity.
    public var profileFile: String?

    /// Parameters with their values and which of them were written rather than defaulted.
    public init(values: [String: ParameterValue] = [:], explicit: Set<String> = []) {
        self.values = values
        self.explicit = explicit
    }

    /// The value of parameter `name`.
    public subscript(name: String) -> ParameterValue? { values[name] }

    /// The number value of `name` (an integer too).
    public func number(_ name: String) -> Double? {
        switch values[name] {
        case .number(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }

    /// The whole-number value of `name`.
    public func integer(_ name: String) -> Int? {
        if case .integer(let v) = values[name] { return v }
        return nil
    }

    /// The boolean value of `name`.
    public func boolean(_ name: String) -> Bool? {
        if case .boolean(let v) = values[name] { return v }
        return nil
    }

    /// The string value of `name`.
    public func string(_ name: String) -> String? {
        if case .string(let v) = values[name] { return v }
        return nil
    }

    /// The list-of-strings value of `name`.
    public func strings(_ name: String) -> [String]? {
        if case .stringList(let v) = values[name] { return v }
        return nil
    }

    /// The list-of-numbers value of `name`.
    public func numbers(_ name: String) -> [Double]? {
        if case .numberList(let v) = values[name] { return v }
        return nil
    }

    /// "name=value" pairs sorted by name: the canonical form used in keys and `check` output.
    public var canonical: String {
        values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ",")
    }
}
