local u = {} for i = 1, 1000 do u[i] = i end
local t = {} for i = 1, 10000 do t[i] = u end
profile "x" { fetch { bogus = t }, decode {}, encode {} }
