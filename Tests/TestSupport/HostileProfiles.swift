/// Profile files written to get around the sandbox's limits, one per way around them that has
/// been tried. Each must stop with an error that names the limit (or the refusal).
public enum HostileProfiles {
    public struct Case: Sendable, CustomStringConvertible {
        public let name: String
        public let lua: String
        /// What the one-line error must contain.
        public let expected: String
        public var description: String { name }
    }

    static let valid = "\nprofile \"x\" { fetch {}, decode {}, encode {} }\n"

    /// The instruction limit or the time limit, whichever this machine reaches first.
    static let cpuLimit = "profile exceeded the"

    public static let all: [Case] = [
        Case(
            name: "pcall swallows the limit",
            lua: "while true do pcall(function() while true do end end) end" + valid,
            expected: cpuLimit),
        Case(
            name: "xpcall swallows the limit",
            lua: "while true do xpcall(function() while true do end end, function(e) return e end) end" + valid,
            expected: cpuLimit),
        Case(
            name: "pcall swallows the memory limit and goes on",
            lua: "for i = 1, 50 do pcall(function() local s = string.rep('x', 1e9) end) end" + valid,
            expected: "memory limit"),
        Case(
            name: "a looping finalizer",
            lua: "setmetatable({}, {__gc = function() while true do end end})" + valid,
            expected: "__gc metamethods are not allowed"),
        Case(
            name: "a finalizer marked early and set later",
            lua:
                "local mt = {__gc = true}\nlocal t = setmetatable({}, mt)\nmt.__gc = function() local s = {} for i = 1, 200 do s[i] = string.rep('x', 1e6) end end"
                + valid,
            expected: "__gc metamethods are not allowed"),
        Case(
            name: "a looping close method",
            lua: "do local x <close> = setmetatable({}, {__close = function() while true do end end}) end" + valid,
            expected: "__close metamethods are not allowed"),
        Case(
            name: "a backtracking pattern",
            lua: "local x = string.rep('a', 5000):find('.-.-.-.-b')" + valid,
            expected: cpuLimit),
        Case(
            name: "a backtracking gsub",
            lua: "local x = string.rep('a', 5000):gsub('(a-)(a-)(a-)b', '%1')" + valid,
            expected: cpuLimit),
        Case(
            name: "gmatch over a backtracking pattern",
            lua: "for w in string.rep('a', 5000):gmatch('a*a*a*b') do end" + valid,
            expected: cpuLimit),
        Case(
            name: "a plain find on megabyte strings",
            lua:
                "local s = string.rep('a', 1000000)\nlocal n = string.rep('a', 500000) .. 'b'\nlocal x = s:find(n, 1, true)"
                + valid,
            expected: cpuLimit),
        Case(
            name: "table.move over 10^14 elements",
            lua: "table.move({}, 1, 1e14, 2)" + valid,
            expected: cpuLimit),
        Case(
            name: "table.insert with a huge __len",
            lua: "local t = setmetatable({}, {__len = function() return 2^40 end})\ntable.insert(t, 1, 'x')" + valid,
            expected: cpuLimit),
        Case(
            name: "table.sort with a huge __len and C metamethods",
            lua:
                "local t = setmetatable({}, {__len = function() return 2^31 - 2 end, __index = type, __newindex = rawequal})\ntable.sort(t)"
                + valid,
            expected: cpuLimit),
        Case(
            name: "table.concat over a huge range",
            lua: "local t = setmetatable({}, {__index = type})\nlocal s = table.concat(t, '', 1, 1e14)" + valid,
            expected: cpuLimit),
        Case(
            name: "a parameter that contains itself 400 times",
            lua:
                "local t = {} for i = 1, 400 do t[i] = t end\nprofile \"x\" { fetch { timeout = t }, decode {}, encode {} }",
            expected: "timeout"),
        Case(
            name: "a sub-table shared 10,000 times",
            lua: "local u = {} for i = 1, 1000 do u[i] = i end\nlocal t = {} for i = 1, 10000 do t[i] = u end\n"
                + "profile \"x\" { fetch { timeout = t }, decode {}, encode {} }",
            expected: "profile values are too large"),
        Case(
            name: "one 10 MB string referenced 100 times",
            lua: "local s = string.rep('x', 1e7)\nlocal t = {} for i = 1, 100 do t[i] = s end\n"
                + "profile \"x\" { fetch { schemes = t }, decode {}, encode {} }",
            expected: "profile values are too large (more than 16 MB in all)"),
        Case(
            name: "a 10 MB string used as a parameter name 2 times",
            lua:
                "local s = string.rep('k', 1e7)\nprofile \"x\" { fetch { [s] = 1, [s .. 'y'] = 2 }, decode {}, encode {} }",
            expected: "profile values are too large"),
        Case(
            name: "10,001 profiles",
            lua: "for i = 1, 10001 do profile('p' .. i) { fetch {}, decode {}, encode {} } end",
            expected: "more than the 10000 a file may hold"),
    ]
}
