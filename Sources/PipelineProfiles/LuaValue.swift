import PipelineHost

/// A Lua value copied out of the sandbox after the script has finished, so the rest of the
/// loader works on plain Swift data.
enum LuaValue {
    case absent
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case table(LuaTable)
    case function
    /// The marker the C stage constructors put in every stage descriptor.
    case descriptorMarker
    /// The marker of a `param "w"` reference.
    case parameterMarker
    case other(String)

    /// How a person would name the value's type in an error message.
    var typeName: String {
        switch self {
        case .absent: "nil"
        case .boolean: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .table: "a table"
        case .function: "a function"
        case .descriptorMarker: "a stage marker"
        case .parameterMarker: "a param reference"
        case .other(let name): name
        }
    }
}

extension LuaValue {
    /// The value as the parameter checker takes it.
    var written: WrittenValue {
        switch self {
        case .absent: .other("nil")
        case .boolean(let v): .boolean(v)
        case .integer(let v): .integer(v)
        case .number(let v): .number(v)
        case .string(let v): .string(v)
        case .table(let table): .table(table.written)
        case .function, .descriptorMarker, .parameterMarker, .other: .other(typeName)
        }
    }
}

struct LuaTable {
    /// Entries 1...n.
    var array: [LuaValue] = []
    /// Entries with string keys.
    var fields: [String: LuaValue] = [:]
    /// How many entries have any other key (floats, booleans, tables, sparse integers).
    var otherKeys = 0

    subscript(index: Int) -> LuaValue { index >= 1 && index <= array.count ? array[index - 1] : .absent }

    var written: WrittenTable {
        WrittenTable(array: array.map(\.written), fields: fields.mapValues(\.written), otherKeys: otherKeys)
    }
}
