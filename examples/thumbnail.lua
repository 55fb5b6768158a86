-- A 300 px square thumbnail, cover-cropped, as album grids and avatars want.
--   pipelinehost run examples/thumbnail.lua https://example.com/cover.jpg -o cover.jpg
profile "thumbnail" {
  normalize  { drop_query = { "u", "t", "s", "p" } },  -- auth and salts never reach the key
  fetch      { timeout = 10, max_bytes = 20e6 },
  cache      { disk = true },                           -- the original on disk: no second download
  decode     { max_pixels = 50e6 },                     -- refuses bombs from the header alone
  downsample { size = 300, fit = "cover" },             -- shrink-on-load: never a full decode
  encode     { format = "jpeg", quality = 82 },
  cache      { memory = true, disk = true },            -- the display-ready variant: no second decode
}
