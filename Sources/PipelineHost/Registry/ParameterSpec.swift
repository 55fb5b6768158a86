/// One parameter a stage accepts: its name, type, range, default and a one-line doc. Profiles
/// are checked against these when they load, and `pipelinehost stages` prints them.
public struct ParameterSpec: Sendable {
    /// What values a parameter takes.
    public enum ValueType: Sendable, CustomStringConvertible {
        case number(ClosedRange<Double>)
        case integer(ClosedRange<Int>)
        case boolean
        case string
        case choice([String])
        case stringList
        /// Exactly `count` numbers in `range`, like focus = { 0.3, 0.6 }.
        case numberList(ClosedRange<Double>, count: Int)
        /// The name of an environment variable the stage reads: a string that
        /// `EnvironmentAccess` must allow, checked when the profile loads.
        case environmentVariable

        public var description: String {
            switch self {
            case .number(let r): "number \(Self.format(r.lowerBound))..\(Self.format(r.upperBound))"
            case .integer(let r): "integer \(r.lowerBound)..\(r.upperBound)"
            case .boolean: "boolean"
            case .string: "string"
            case .choice(let options): options.map { "\"\($0)\"" }.joined(separator: "|")
            case .stringList: "list of strings"
            case .numberList(let r, let count):
                "\(count) numbers \(Self.format(r.lowerBound))..\(Self.format(r.upperBound))"
            case .environmentVariable: "environment variable name"
            }
        }

        static func format(_ value: Double) -> String {
            ParameterValue.number(value).description
        }
    }

    /// The name a profile writes.
    public let name: String
    /// What values it takes.
    public let type: ValueType
    /// Used when a profile leaves the parameter out. nil means optional with no value.
    public let defaultValue: ParameterValue?
    /// One line for `pipelinehost stages`.
    public let doc: String

    /// A parameter `name` of `type`; without a default it is absent unless written.
    public init(_ name: String, _ type: ValueType, default defaultValue: ParameterValue? = nil, doc: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.doc = doc
    }
}

/// A parameter value after type-checking.
public enum ParameterValue: Sendable, Hashable, CustomStringConvertible {
    case number(Double)
    case integer(Int)
    case boolean(Bool)
    case string(String)
    case stringList([String])
    case numberList([Double])

    /// Canonical text: the same value always prints the same way, so it can be part of a key.
    public var description: String {
        switch self {
        case .number(let v):
            if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
            return String(v)
        case .integer(let v): return String(v)
        case .boolean(let v): return v ? "true" : "false"
        case .string(let v): return "\"\(v)\""
        case .stringList(let v): return "{" + v.map { "\"\($0)\"" }.joined(separator: ",") + "}"
        case .numberList(let v):
            return "{" + v.map { ParameterValue.number($0).description }.joined(separator: ",") + "}"
        }
    }
}
