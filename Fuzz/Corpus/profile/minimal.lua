profile "p" { fetch { timeout = 5 }, decode {}, downsample { size = 300 }, encode {} }
