-- The full-player background: small, blurred and dimmed so white text reads on top.
-- Downsample first: a blur at 5120x2880 costs about 100 times more than at 512 px.
profile "blurred-background" {
  normalize  { drop_query = { "u", "t", "s", "p" } },
  fetch      { timeout = 10 },
  cache      { disk = true },                           -- the original on disk
  decode     {},
  downsample { size = 512 },
  blur       { sigma = 12, dim = 0.35 },
  encode     { format = "jpeg", quality = 75 },
  cache      { memory = true },                         -- the variant, for this process
}
