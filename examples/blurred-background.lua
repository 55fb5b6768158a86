-- The full-player background: small, blurred and dimmed so white text reads on top.
-- Downsample first, and far: a blur at 5120x2880 costs about 100 times more than at 512 px, and
-- a blur at 128 px scaled up to 512 looks the same for a sixteenth of the decode and blur work.
profile "blurred-background" {
  normalize  { drop_query = { "u", "t", "s", "p" } },
  fetch      { timeout = 10 },
  cache      { disk = true },                           -- the original on disk
  decode     {},
  downsample { size = 128 },                            -- a blur hides detail: a quarter of the size will do
  blur       { sigma = 12, dim = 0.35, size = 512 },    -- blurred at 128 px, scaled up to 512: the same look
  encode     { format = "jpeg", quality = 75 },
  cache      { memory = true },                         -- the variant, for this process
}
