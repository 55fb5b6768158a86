import PipelineHost
import TestSupport
import Testing

@Suite("Hostile profiles stop at the sandbox's limits")
struct HostileProfileTests {
    @Test("each way around the limits is stopped", arguments: HostileProfiles.all)
    func stopped(_ hostile: HostileProfiles.Case) throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(hostile.lua, name: "hostile.lua") }
        #expect(error?.description.contains(hostile.expected) == true, "\(error?.description ?? "no error")")
        #expect(error?.description.hasPrefix("hostile.lua") == true)
    }

    @Test(
        "an error that quotes 10 MB of the profile stays one short line",
        arguments: [
            "error(string.rep('x', 1e7))",
            "profile \"x\" { fetch { [string.rep('k', 1e6)] = 1 }, decode {}, encode {} }",
            "profile \"x\" { fetch {}, decode {}, encode { format = string.rep('j', 1e6) } }",
        ])
    func longErrorsAreCut(_ lua: String) throws {
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "long.lua") }
        let description = error?.description ?? ""
        #expect(description.utf8.count < 700, "\(description.utf8.count) bytes")
        #expect(description.hasSuffix("more bytes)"), "\(description.suffix(80))")
        #expect(!description.contains("\n"))
    }

    @Test("a limit caught by pcall still stops a script that then declares its profiles")
    func sticky() throws {
        let lua = """
            local ok = pcall(function() local n = 0 while true do n = n + 1 end end)
            profile "thumb" { fetch {}, decode {}, encode {} }
            """
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "sticky.lua") }
        #expect(error?.message.contains("profile exceeded the") == true)
    }

    @Test(
        "profile names are checked",
        arguments: [
            ("../up", "may use only letters, digits, '.', '_' and '-'"),
            ("a b", "may use only letters, digits, '.', '_' and '-'"),
            ("", "is empty"),
            (String(repeating: "n", count: 65), "is longer than 64 characters"),
            ("bell\u{07}", "may use only letters"),
        ])
    func names(_ name: String, _ problem: String) throws {
        let lua =
            "local n = ...\nprofile(\"\(name.unicodeScalars.map { $0.value < 32 ? "\\\($0.value)" : String($0) }.joined())\") { fetch {}, decode {}, encode {} }\n"
        let error = #expect(throws: ProfileError.self) { try TestPipeline.load(lua, name: "names.lua") }
        #expect(error?.line == 2)
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\u{07}") == false)
    }

    @Test("a name of 64 letters, digits, dots, dashes and underscores is fine")
    func longestName() throws {
        let name = "Thumb_1.x-" + String(repeating: "n", count: 54)
        let set = try TestPipeline.load("profile \"\(name)\" { fetch {}, decode {}, encode {} }")
        #expect(set.names == [name])
    }

    @Test("10,000 profiles are still allowed")
    func tenThousand() throws {
        let set = try TestPipeline.load("for i = 1, 10000 do profile('p' .. i) { fetch {} } end")
        #expect(set.profiles.count == 10_000)
    }
}

@Suite("The sandbox's pattern and table functions behave like Lua's")
struct SandboxLibraryTests {
    /// Each line must hold; the profile loads only if every assert passes.
    @Test(
        "patterns and table functions",
        arguments: [
            "assert(('a,b,,c'):gsub(',', ';') == 'a;b;;c')",
            "assert(select(2, ('a,b,,c'):gsub(',', ';')) == 3)",
            "local p = {} for w in ('one two  three'):gmatch('%a+') do p[#p + 1] = w end assert(#p == 3 and p[3] == 'three')",
            "local k, v = ('key=val'):match('(%w+)=(%w+)') assert(k == 'key' and v == 'val')",
            "assert(('hello world'):match('^(%w+)') == 'hello')",
            "assert(('hello'):match('^l') == nil)",
            "assert(select(2, ('abc'):gsub('', '-')) == 4)",
            "assert(('abc'):gsub('', '-') == '-a-b-c-')",
            "assert(('x = 1'):find('=', 1, true) == 3)",
            "assert(('a.b'):find('.', 2, true) == 2)",
            "local s, e, w = ('THE (quick) fox'):find('%((%a+)%)') assert(s == 5 and e == 11 and w == 'quick')",
            "assert(('f(a(b)c)d'):match('%b()') == '(a(b)c)')",
            "assert(('hello'):gsub('l+', function(m) return '<' .. m .. '>' end) == 'he<ll>o')",
            "assert(('THE (quick) fox'):gsub('%f[%a]%a+', 'W') == 'W (W) W')",
            "assert(('hello world'):gsub('(%w+)', '%1 %1', 1) == 'hello hello world')",
            "assert(('abc'):gsub('%w', {a = 1, b = false}) == '1bc')",
            "assert(('[x]'):match('^%[(.-)%]$') == 'x')",
            "assert(('2024-01-02'):match('(%d+)-(%d+)-(%d+)') == '2024')",
            "assert(('  trim  '):match('^%s*(.-)%s*$') == 'trim')",
            "assert(('aaa'):find('a-', 2) == 2)",
            "assert(('abcabc'):find('(b)(c)', 3) == 5)",
            "assert(('xyz'):match('()y()') == 2)",
            "assert(('hello'):find('l', -2) == 4)",
            "assert(('ab'):rep(3, ',') == 'ab,ab,ab')",
            "assert(('abab'):match('(ab)%1') == 'ab')",
            "assert(not pcall(string.find, 'a', '[a'))",
            "assert(not pcall(string.gsub, 'a', 'a', '%2'))",
            "local t = {5, 3, 8, 1} table.sort(t) assert(table.concat(t, ',') == '1,3,5,8')",
            "local t = {5, 3, 8, 1} table.sort(t, function(a, b) return a > b end) assert(table.concat(t, ',') == '8,5,3,1')",
            "local t = {1, 2} table.insert(t, 1, 0) table.insert(t, 3) assert(table.concat(t, ',') == '0,1,2,3')",
            "local t = {1, 2, 3} assert(table.remove(t, 1) == 1 and table.remove(t) == 3 and #t == 1)",
            "assert(table.concat(table.move({1, 2, 3}, 1, 3, 2), ',') == '1,1,2,3')",
            "assert(table.concat(table.move({1, 2, 3}, 2, 3, 1), ',') == '2,3,3')",
            "assert(table.concat(table.move({1, 2}, 1, 2, 1, {}), ',') == '1,2')",
            "assert(table.concat({1, 'a', 2.5}, '-', 2) == 'a-2.5')",
            "assert(not pcall(table.concat, {1, {}, 3}))",
            "local t = {} for i = 1, 200 do t[i] = (i * 7919) % 211 end table.sort(t) for i = 2, 200 do assert(t[i - 1] <= t[i]) end",
        ])
    func library(_ line: String) throws {
        let set = try TestPipeline.load(line + "\nprofile \"x\" { fetch {}, decode {}, encode {} }\n")
        #expect(set.names == ["x"])
    }
}
