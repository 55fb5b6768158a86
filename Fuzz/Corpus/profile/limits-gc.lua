setmetatable({}, {__gc = function() while true do end end})
profile "x" { fetch {}, decode {}, encode {} }
