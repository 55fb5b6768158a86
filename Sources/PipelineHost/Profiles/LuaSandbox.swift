import CLua
import Glibc

/// The Swift side of the C sandbox (ph_lua.c). One instance lives inside one `ProfileLoader.load`
/// call and never leaves it, so the lua_State stays in a single isolation domain. Every call
/// that can raise a Lua error runs under lua_pcall in C; Swift only uses the non-raising raw
/// accessors below to read the results.
final class LuaSandbox {
    private let sandbox: OpaquePointer
    private var L: OpaquePointer { ph_lua_sandbox_state(sandbox) }

    /// Bounds for copying values out, so a hostile table cannot make reading it expensive.
    private static let maxDepth = 8
    private static let maxEntries = 10_000

    enum RunFailure: Error {
        case message(String)
        case outOfMemory
    }

    init(globals: [String], limits: ProfileLimits) throws(RunFailure) {
        var error = [CChar](repeating: 0, count: 512)
        let created: OpaquePointer? = withCStrings(globals) { names in
            ph_lua_sandbox_new(limits.memoryBytes, limits.instructions, limits.seconds,
                               names, Int32(globals.count), &error, error.count)
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
        if status == LUA_ERRMEM { throw .outOfMemory }
        var length = 0
        guard let text = ph_lua_error_string(L, &length) else { throw .message("error object is not a string") }
        throw .message(Self.string(text, length))
    }

    /// The declared profiles, as `{ { name, line, stages }, ... }`.
    func profiles() -> LuaValue {
        ph_lua_push_profiles(sandbox)
        defer { ph_lua_pop(L, 1) }
        return read(-1, depth: 0)
    }

    private func read(_ index: Int32, depth: Int) -> LuaValue {
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE:
            return .absent
        case LUA_TBOOLEAN:
            return .boolean(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            return ph_lua_isinteger(L, index) != 0 ? .integer(ph_lua_tointeger(L, index)) : .number(ph_lua_tonumber(L, index))
        case LUA_TSTRING:
            var length = 0
            return .string(Self.string(lua_tolstring(L, index, &length), length))
        case LUA_TTABLE:
            return readTable(lua_absindex(L, index), depth: depth)
        case LUA_TFUNCTION:
            return .function
        case LUA_TLIGHTUSERDATA:
            return lua_touserdata(L, index) == ph_lua_descriptor_marker() ? .descriptorMarker : .other("a userdata")
        case let type:
            return .other("a " + String(cString: lua_typename(L, type)))
        }
    }

    private func readTable(_ table: Int32, depth: Int) -> LuaValue {
        guard depth < Self.maxDepth else { return .other("a table nested too deeply") }
        guard lua_checkstack(L, 4) != 0 else { return .other("a table too large to read") }
        var result = LuaTable()
        let count = min(Int(lua_rawlen(L, table)), Self.maxEntries)
        for i in 0..<count {
            lua_rawgeti(L, table, lua_Integer(i + 1))
            result.array.append(read(-1, depth: depth + 1))
            ph_lua_pop(L, 1)
        }
        lua_pushnil(L)
        var seen = 0
        while lua_next(L, table) != 0 {
            seen += 1
            if seen > Self.maxEntries + count {
                ph_lua_pop(L, 2)  // the value and the key: iteration stops here
                break
            }
            if lua_type(L, -2) == LUA_TSTRING {
                var length = 0
                let key = Self.string(lua_tolstring(L, -2, &length), length)
                result.fields[key] = read(-1, depth: depth + 1)
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

    private static func string(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}

/// Calls `body` with a NULL-free array of C strings that live for the call.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
