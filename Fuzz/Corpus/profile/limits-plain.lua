local s = string.rep("a", 1000000)
local n = string.rep("a", 500000) .. "b"
local x = s:find(n, 1, true)
profile "x" { fetch {}, decode {}, encode {} }
