for i = 1, 100 do pcall(function() local s = string.rep("x", 1e9) end) end
profile "x" { fetch {}, decode {}, encode {} }
