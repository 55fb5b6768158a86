/// A stage parameter as someone wrote it, before it is checked against the stage's schema: from
/// a profile file (the profile loader turns its Lua values into these) or from a per-request
/// override. The parameter checker knows this, and nothing of Lua.
public enum WrittenValue: Sendable {
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case table(WrittenTable)
    /// Anything a parameter cannot be (a function, nil), by the name a person would use: "a
    /// function".
    case other(String)

    /// How a person would name the value's type in an error message.
    public var typeName: String {
        switch self {
        case .boolean: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .table: "a table"
        case .other(let name): name
        }
    }

    /// What a profile would have written to get `value`.
    public init(_ value: ParameterValue) {
        switch value {
        case .number(let v): self = .number(v)
        case .integer(let v): self = .integer(Int64(v))
        case .boolean(let v): self = .boolean(v)
        case .string(let v): self = .string(v)
        case .stringList(let v): self = .table(WrittenTable(array: v.map { .string($0) }))
        case .numberList(let v): self = .table(WrittenTable(array: v.map { .number($0) }))
        }
    }

    var asDouble: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .number(let v): v
        default: nil
        }
    }
}

/// A table of written values: a list part, named fields, and a count of any other keys.
public struct WrittenTable: Sendable {
    /// Entries 1...n.
    public var array: [WrittenValue]
    /// Entries with string keys.
    public var fields: [String: WrittenValue]
    /// How many entries have any other key (floats, booleans, tables, sparse integers).
    public var otherKeys: Int

    /// A table of written values.
    public init(array: [WrittenValue] = [], fields: [String: WrittenValue] = [:], otherKeys: Int = 0) {
        self.array = array
        self.fields = fields
        self.otherKeys = otherKeys
    }
}
