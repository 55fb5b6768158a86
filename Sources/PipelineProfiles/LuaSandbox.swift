import CLua
import Glibc
import PipelineHost

/// The Swift side of the C sandbox (ph_lua.c). One instance lives inside one `ProfileLoader.load`
/// call and never leaves it, so the lua_State stays in a single isolation domain. Every call
/// that can raise a Lua error runs under lua_pcall in C. Swift reads only the error text of a
/// failed run; the declared profiles come back as plain data.
final class LuaSandbox {
    private let sandbox: OpaquePointer
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // L: the name Lua's own API gives the state.
    private var L: OpaquePointer { ph_lua_sandbox_state(sandbox) }

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
                ph_lua_sandbox_new(
                    limits.memoryBytes, limits.instructions, limits.seconds,
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

    /// The declared profiles, as `{ { name, line, stages }, ... }`, exported by the C side as
    /// plain data (ph_lua_export_profiles) under its bounds: Swift never walks the Lua state.
    func profiles() throws(ReadFailure) -> LuaValue {
        var export = ph_lua_export_profiles(sandbox)
        defer { ph_lua_export_free(&export) }
        guard let data = export.data else {
            throw ReadFailure(
                message: withUnsafeBytes(of: export.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        var reader = ExportReader(bytes: UnsafeRawBufferPointer(start: data, count: export.length))
        guard let value = reader.value() else { throw ReadFailure(message: "internal error: malformed profile export") }
        return value
    }

    /// Reads ph_lua_export's format (see ph_lua.h); nil on a malformed buffer.
    private struct ExportReader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func value() -> LuaValue? {
            guard let tag = take(UInt8.self) else { return nil }
            switch UnicodeScalar(tag) {
            case "n": return .absent
            case "b": return take(UInt8.self).map { .boolean($0 != 0) }
            case "i": return take(Int64.self).map { .integer($0) }
            case "d": return take(Double.self).map { .number($0) }
            case "s": return text().map { .string($0) }
            case "f": return .function
            case "m": return .descriptorMarker
            case "p": return .parameterMarker
            case "o": return text().map { .other($0) }
            case "t": return table()
            default: return nil
            }
        }

        private mutating func table() -> LuaValue? {
            guard let count = take(UInt32.self) else { return nil }
            var table = LuaTable()
            for _ in 0..<count {
                guard let item = value() else { return nil }
                table.array.append(item)
            }
            guard let fields = take(UInt32.self) else { return nil }
            for _ in 0..<fields {
                guard let key = text(), let item = value() else { return nil }
                table.fields[key] = item
            }
            guard let others = take(UInt32.self) else { return nil }
            table.otherKeys = Int(others)
            return .table(table)
        }

        private mutating func text() -> String? {
            guard let length = take(UInt32.self).map(Int.init), offset + length <= bytes.count else { return nil }
            defer { offset += length }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
        }

        private mutating func take<T>(_: T.Type) -> T? {
            guard offset + MemoryLayout<T>.size <= bytes.count else { return nil }
            defer { offset += MemoryLayout<T>.size }
            return bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        }
    }

    private static func string(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
