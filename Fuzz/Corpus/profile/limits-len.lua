local t = setmetatable({}, {__len = function() return 2^40 end})
table.insert(t, 1, "x")
profile "x" { fetch {}, decode {}, encode {} }
