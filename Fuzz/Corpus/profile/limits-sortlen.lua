local t = setmetatable({}, {__len = function() return 2^31 - 2 end, __index = type, __newindex = rawequal})
table.sort(t)
profile "x" { fetch {}, decode {}, encode {} }
