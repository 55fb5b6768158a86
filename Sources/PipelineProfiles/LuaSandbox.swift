import CLua
import Glibc
import PipelineHost

/// The Swift side of the C sandbox (ph_lua.c). One instance lives inside one `ProfileLoader.load`
/// call and never leaves it, so the lua_State stays in a single isolation domain. Every call
/// that can raise a Lua error runs under lua_pcall in C; Swift only uses the non-raising raw
/// accessors below to read the results.
final class LuaSandbox {
    private let sandbox: OpaquePointer
    private var L: OpaquePointer { ph_lua_sandbox_state(sandbox) }

    /// Bounds for copying values out, so a hostile table cannot make reading it expensive: a
    /// depth, a size per table, and one budget of values for the whole tree, so a table shared
    /// many times (`t[i] = t`) costs its size each time it is read, up to the budget.
    static let maxDepth = 8
    static let maxEntries = 10_000
    static let maxValues = 200_000

    enum RunFailure: Error {
        case message(String)
        case outOfMemory
    }

    /// A declared value that cannot be read back within the bounds above.
    struct ReadFailure: Error {
        let message: String
    }

    init(globals: [String], limits: ProfileLimits) throws(RunFailure) {
        var error = [CChar](repeating: 0, count: 512)
        let created: OpaquePointer? = withCStrings(globals) { names in
            names.withUnsafeBufferPointer {
                ph_lua_sandbox_new(limits.memoryBytes, limits.instructions, limits.seconds,
                                   $0.baseAddress, Int32(globals.count), &error, error.count)
            }
        }
        guard let created else {
            throw .message(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        sandbox = created
    }

    deinit { ph_lua_sandbox_free(sandbox) }

    /// Runs a text chunk under the sandbox's limits.
    func run(_ code: [UInt8], chunkName: String) throws(RunFailure) {
        let status = code.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                ph_lua_sandbox_run(sandbox, $0.baseAddress, $0.count, chunkName)
            }
        }
        guard status != LUA_OK else { return }
        defer { ph_lua_pop(L, 1) }
        if status == LUA_ERRMEM || ph_lua_sandbox_tripped(sandbox) == PH_LUA_LIMIT_MEMORY { throw .outOfMemory }
        var length = 0
        guard let text = ph_lua_error_string(L, &length) else { throw .message("error object is not a string") }
        throw .message(Self.string(text, length))
    }

    /// The declared profiles, as `{ { name, line, stages }, ... }`.
    func profiles() throws(ReadFailure) -> LuaValue {
        ph_lua_push_profiles(sandbox)
        defer { ph_lua_pop(L, 1) }
        let declared = Int(lua_rawlen(L, -1))
        guard declared <= Self.maxEntries else {
            throw ReadFailure(message: "defines \(declared) profiles, more than the \(Self.maxEntries) a file may hold")
        }
        var reader = Reader(L: L)
        return try reader.read(-1, depth: 0)
    }

    /// Copies values out of the state. `budget` counts every value read in the whole tree, and
    /// `open` holds the tables on the current path, so a table that contains itself is named
    /// instead of read again until the depth runs out.
    private struct Reader {
        let L: OpaquePointer
        var budget = LuaSandbox.maxValues
        var open: Set<UnsafeRawPointer> = []

        mutating func read(_ index: Int32, depth: Int) throws(ReadFailure) -> LuaValue {
            budget -= 1
            guard budget >= 0 else {
                throw ReadFailure(message: "profile values are too large (more than \(LuaSandbox.maxValues) values in all)")
            }
            switch lua_type(L, index) {
            case LUA_TNIL, LUA_TNONE:
                return .absent
            case LUA_TBOOLEAN:
                return .boolean(lua_toboolean(L, index) != 0)
            case LUA_TNUMBER:
                return ph_lua_isinteger(L, index) != 0 ? .integer(ph_lua_tointeger(L, index)) : .number(ph_lua_tonumber(L, index))
            case LUA_TSTRING:
                var length = 0
                return .string(LuaSandbox.string(lua_tolstring(L, index, &length), length))
            case LUA_TTABLE:
                return try readTable(lua_absindex(L, index), depth: depth)
            case LUA_TFUNCTION:
                return .function
            case LUA_TLIGHTUSERDATA:
                return lua_touserdata(L, index) == ph_lua_descriptor_marker() ? .descriptorMarker : .other("a userdata")
            case let type:
                return .other("a " + String(cString: lua_typename(L, type)))
            }
        }

        private mutating func readTable(_ table: Int32, depth: Int) throws(ReadFailure) -> LuaValue {
            guard depth < LuaSandbox.maxDepth else { return .other("a table nested too deeply") }
            guard let identity = lua_topointer(L, table) else { return .other("a table") }
            guard !open.contains(identity) else { return .other("a table that contains itself") }
            guard lua_checkstack(L, 4) != 0 else { return .other("a table too large to read") }
            let count = Int(lua_rawlen(L, table))
            guard count <= LuaSandbox.maxEntries else {
                throw ReadFailure(message: "a table has \(count) entries, more than the \(LuaSandbox.maxEntries) a profile may use")
            }
            open.insert(identity)
            defer { open.remove(identity) }
            var result = LuaTable()
            for i in 0..<count {
                lua_rawgeti(L, table, lua_Integer(i + 1))
                defer { ph_lua_pop(L, 1) }
                result.array.append(try read(-1, depth: depth + 1))
            }
            lua_pushnil(L)
            var seen = 0
            while lua_next(L, table) != 0 {
                seen += 1
                guard seen <= LuaSandbox.maxEntries + count else {
                    ph_lua_pop(L, 2)  // the value and the key: iteration stops here
                    throw ReadFailure(message: "a table has more than the \(LuaSandbox.maxEntries) entries a profile may use")
                }
                if lua_type(L, -2) == LUA_TSTRING {
                    var length = 0
                    let key = LuaSandbox.string(lua_tolstring(L, -2, &length), length)
                    do {
                        result.fields[key] = try read(-1, depth: depth + 1)
                    } catch {
                        ph_lua_pop(L, 2)
                        throw error
                    }
                } else if !isArrayIndex(-2, count: count) {
                    result.otherKeys += 1
                }
                ph_lua_pop(L, 1)
            }
            return .table(result)
        }

        /// Whether the key at `index` is one of 1...count, already read as the array part.
        private func isArrayIndex(_ index: Int32, count: Int) -> Bool {
            guard ph_lua_isinteger(L, index) != 0 else { return false }
            let key = ph_lua_tointeger(L, index)
            return key >= 1 && key <= count
        }
    }

    fileprivate static func string(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
