while true do pcall(function() while true do end end) end
profile "x" { fetch {}, decode {}, encode {} }
