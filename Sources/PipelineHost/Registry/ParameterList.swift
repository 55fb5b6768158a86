/// Anything a `ParameterList` declares: a parameter with its spec.
public protocol DeclaredParameter: Sendable {
    /// What the profile loader checks.
    var spec: ParameterSpec { get }
}

extension Parameter: DeclaredParameter {}
extension OptionalParameter: DeclaredParameter {}

/// A stage's parameters, each declared once, as a stored property of a struct. The definition
/// lists `specs` (in the order they are declared, which `stages` shows), and the stage reads each
/// one typed through a key path, so a parameter cannot be listed and forgotten, or read and not
/// listed:
///
///     struct Keys: ParameterList {
///         let sigma = Parameter<Double>("sigma", .number(0.1...200), default: 10, doc: "radius")
///         let size = OptionalParameter<Int>("size", .integer(1...16384), doc: "longest side")
///     }
///     StageDefinition(name: "blur", ..., parameters: Keys.specs,
///                     make: { BlurStage(sigma: $0[\Keys.sigma], size: $0[\Keys.size]) })
public protocol ParameterList: Sendable {
    /// The list, with every parameter declared.
    init()
}

extension ParameterList {
    /// Every declared parameter's spec, in declaration order.
    public static var specs: [ParameterSpec] {
        Mirror(reflecting: Self()).children.compactMap { ($0.value as? any DeclaredParameter)?.spec }
    }
}

extension StageParameters {
    /// The typed value of a listed parameter with a default, `parameters[\Keys.sigma]`.
    public subscript<List: ParameterList, Value>(_ key: KeyPath<List, Parameter<Value>>) -> Value {
        self[List()[keyPath: key]]
    }

    /// The typed value of a listed parameter without one, nil when the profile left it out.
    public subscript<List: ParameterList, Value>(_ key: KeyPath<List, OptionalParameter<Value>>) -> Value? {
        self[List()[keyPath: key]]
    }
}

/// A parameter whose values are the cases of a string enum: its choices are the raw values, in
/// case order, and a stage reads the case, so a choice is parsed once, where it is declared.
///
///     enum Fit: String, ParameterChoice { case inside, cover, contain }
///     let fit = Parameter<Fit>("fit", default: .inside, doc: "...")
public protocol ParameterChoice: ParameterReadable, RawRepresentable, CaseIterable where RawValue == String {}

extension ParameterChoice {
    /// The case whose raw value is written.
    public static func read(_ written: ParameterValue) -> Self? { String.read(written).flatMap(Self.init(rawValue:)) }
    /// The raw value, as a string.
    public var written: ParameterValue { .string(rawValue) }
    /// The spec type: a choice of every case's raw value.
    public static var choices: ParameterSpec.ValueType { .choice(allCases.map(\.rawValue)) }
}

extension Parameter where Value: ParameterChoice {
    /// A choice among `Value`'s cases, `value` when a profile leaves it out.
    public init(_ name: String, default value: Value, doc: String) {
        self.init(name, Value.choices, default: value, doc: doc)
    }
}

extension OptionalParameter where Value: ParameterChoice {
    /// A choice among `Value`'s cases, absent unless a profile writes it.
    public init(_ name: String, doc: String) {
        self.init(name, Value.choices, doc: doc)
    }
}
