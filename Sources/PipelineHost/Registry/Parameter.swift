/// A value a typed parameter holds, and how it is written as a `ParameterValue`.
public protocol ParameterReadable: Sendable {
    /// The value in `written`, or nil when it is another kind.
    static func read(_ written: ParameterValue) -> Self?
    /// The value as written, for a default.
    var written: ParameterValue { get }
}

extension Double: ParameterReadable {
    /// A number; an integer reads as a number too.
    public static func read(_ written: ParameterValue) -> Double? {
        switch written {
        case .number(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
    /// `.number`.
    public var written: ParameterValue { .number(self) }
}

extension Int: ParameterReadable {
    /// A whole number.
    public static func read(_ written: ParameterValue) -> Int? {
        if case .integer(let value) = written { value } else { nil }
    }
    /// `.integer`.
    public var written: ParameterValue { .integer(self) }
}

extension Bool: ParameterReadable {
    /// A boolean.
    public static func read(_ written: ParameterValue) -> Bool? {
        if case .boolean(let value) = written { value } else { nil }
    }
    /// `.boolean`.
    public var written: ParameterValue { .boolean(self) }
}

extension String: ParameterReadable {
    /// A string (a choice and an environment variable's name are strings too).
    public static func read(_ written: ParameterValue) -> String? {
        if case .string(let value) = written { value } else { nil }
    }
    /// `.string`.
    public var written: ParameterValue { .string(self) }
}

/// An element of a list parameter: strings or numbers.
public protocol ParameterListElement: Sendable {
    /// The list in `written`, or nil when it is another kind.
    static func readList(_ written: ParameterValue) -> [Self]?
    /// `list` as written.
    static func writeList(_ list: [Self]) -> ParameterValue
}

extension String: ParameterListElement {
    /// A list of strings.
    public static func readList(_ written: ParameterValue) -> [String]? {
        if case .stringList(let value) = written { value } else { nil }
    }
    /// `.stringList`.
    public static func writeList(_ list: [String]) -> ParameterValue { .stringList(list) }
}

extension Double: ParameterListElement {
    /// A list of numbers.
    public static func readList(_ written: ParameterValue) -> [Double]? {
        if case .numberList(let value) = written { value } else { nil }
    }
    /// `.numberList`.
    public static func writeList(_ list: [Double]) -> ParameterValue { .numberList(list) }
}

extension Array: ParameterReadable where Element: ParameterListElement {
    /// A list of the element's kind.
    public static func read(_ written: ParameterValue) -> [Element]? { Element.readList(written) }
    /// The list as written.
    public var written: ParameterValue { Element.writeList(self) }
}

/// A parameter with a default, declared once: its spec goes into the stage's definition, and a
/// stage reads it back typed and without an optional, `parameters[Fetch.timeout]`.
///
///     static let timeout = Parameter<Double>("timeout", .number(0.1...600), default: 30, doc: "seconds")
public struct Parameter<Value: ParameterReadable>: Sendable {
    /// What the profile loader checks.
    public let spec: ParameterSpec
    private let fallback: Value

    /// A parameter named `name` of `type`, `value` when a profile leaves it out.
    public init(_ name: String, _ type: ParameterSpec.ValueType, default value: Value, doc: String) {
        spec = ParameterSpec(name, type, default: value.written, doc: doc)
        fallback = value
    }

    /// The parameter's name.
    public var name: String { spec.name }

    /// The value in `parameters`: what the profile wrote, else the default. (A checked set
    /// always holds it; the default stands in for a hand-made set that does not.)
    public func value(in parameters: StageParameters) -> Value {
        parameters[name].flatMap(Value.read) ?? fallback
    }
}

/// A parameter with no default: a stage reads it as an optional, nil when the profile left it
/// out. Declared once, like `Parameter`.
public struct OptionalParameter<Value: ParameterReadable>: Sendable {
    /// What the profile loader checks.
    public let spec: ParameterSpec

    /// A parameter named `name` of `type`, absent unless a profile writes it.
    public init(_ name: String, _ type: ParameterSpec.ValueType, doc: String) {
        spec = ParameterSpec(name, type, doc: doc)
    }

    /// The parameter's name.
    public var name: String { spec.name }

    /// The value in `parameters`, if the profile wrote one.
    public func value(in parameters: StageParameters) -> Value? { parameters[name].flatMap(Value.read) }
}

extension StageParameters {
    /// The typed value of a parameter with a default.
    public subscript<Value>(_ parameter: Parameter<Value>) -> Value { parameter.value(in: self) }
    /// The typed value of a parameter without one.
    public subscript<Value>(_ parameter: OptionalParameter<Value>) -> Value? { parameter.value(in: self) }
}
