table.move({}, 1, 1e14, 2)
profile "x" { fetch {}, decode {}, encode {} }
