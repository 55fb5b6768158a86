import PipelineHost
import TestSupport
import Testing

@Suite("The Lua sandbox")
struct SandboxTests {
    @Test(
        "dangerous globals are not there",
        arguments: ["io", "os", "require", "load", "loadfile", "dofile", "debug", "package", "collectgarbage"])
    func unreachable(_ name: String) throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load("local x = \(name)\n", name: "h.lua") }
        #expect(error?.line == 1)
        #expect(error?.message.hasPrefix("unknown stage or name '\(name)'") == true)
    }

    @Test("string, table, math and utf8 work")
    func allowedLibraries() throws {
        let set = try TestPipeline.load(
            """
            local side = math.floor(string.len("abc") * 100)
            local names = { "thumb" }
            table.insert(names, "nail")
            profile(table.concat(names)) { fetch {}, decode {}, downsample { size = side + utf8.len("ü") - 1 }, encode {} }
            """)
        #expect(set.names == ["thumbnail"])
        #expect(set["thumbnail"]!.stages[2].parameters.integer("size") == 300)
    }

    @Test("the string metatable cannot be reached")
    func stringMetatable() throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load("getmetatable('').__index.rep = nil\n") }
        #expect(error?.message == "attempt to index a boolean value")
    }

    @Test(
        "no function makes bytecode: string.dump is gone, by name and through a string's methods",
        arguments: ["string.dump(function() end)", "(\"\"):dump()", "string[\"du\" .. \"mp\"](tostring)"])
    func noDump(_ call: String) throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load("local b = \(call)\n", name: "d.lua") }
        #expect(error?.line == 1, "\(String(describing: error))")
        #expect(
            error?.message.contains("dump") == true || error?.message.contains("nil value") == true,
            "\(String(describing: error))")
    }

    @Test("bytecode is refused")
    func bytecode() throws {
        let chunk = "\u{1B}Lua" + String(repeating: "x", count: 20)
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(chunk, name: "b.lua") }
        #expect(error?.description.contains("attempt to load a binary chunk") == true)
    }

    @Test("an infinite loop hits the instruction limit")
    func infiniteLoop() throws {
        // Time enough that only the instructions can run out, on a machine however busy (or
        // slowed by ThreadSanitizer): 20 million of them take a fraction of a second idle.
        let limits = ProfileLimits(seconds: 600)
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load("local n = 0\nwhile true do n = n + 1 end\n", name: "loop.lua", limits: limits)
        }
        #expect(error?.line == 2)
        #expect(error?.message == "profile exceeded the instruction limit (20000000 instructions)")
    }

    @Test("a slow script hits the time limit before the instruction limit")
    func timeLimit() throws {
        // string.rep is one instruction that takes real time; a tiny time limit catches the loop.
        let limits = ProfileLimits(instructions: .max, seconds: 0.05)
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(
                "while true do local s = string.rep('x', 4096) end\n", name: "slow.lua", limits: limits)
        }
        #expect(
            error?.message == "profile exceeded the time limit (0.1 s)"
                || error?.message == "profile exceeded the time limit (0.0 s)")
    }

    @Test(
        "memory bombs hit the memory limit",
        arguments: [
            "local s = string.rep('x', 1e9)",
            "local t = {} for i = 1, 1e8 do t[i] = i end",
            "local s = 'x' while true do s = s .. s end",
        ])
    func memoryBomb(_ lua: String) throws {
        // A table filled an entry at a time takes millions of instructions and many allocations
        // to reach 32 MB: time enough that the clock cannot win on a busy machine.
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(lua, name: "bomb.lua", limits: ProfileLimits(seconds: 600))
        }
        #expect(error?.description == "bomb.lua: profile exceeded the memory limit (32 MB)")
    }

    @Test("deep recursion is stopped")
    func recursion() throws {
        let error = #expect(throws: ProfileError.self) {
            try TestPipeline.load(
                "local function f(n) return f(n + 1) + 1 end\nf(1)\n", name: "r.lua",
                limits: ProfileLimits(seconds: 600))
        }
        let message = error?.description ?? ""
        #expect(
            message.contains("stack overflow") || message.contains("memory limit")
                || message.contains("instruction limit"))
    }
}
