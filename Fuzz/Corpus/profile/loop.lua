local t = {}
for i = 1, 10 do t[i] = string.rep("x", i) end
profile(t[3]) { fetch {}, decode {}, encode { format = "webp" } }
