local x = string.rep("a", 5000):find(".-.-.-.-b")
profile "x" { fetch {}, decode {}, encode {} }
