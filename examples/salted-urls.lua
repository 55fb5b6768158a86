-- Both profiles for URLs an app has already signed, such as Subsonic getCoverArt URLs
--   https://music.example/rest/getCoverArt?id=al-42&u=me&t=<md5>&s=<salt>&v=1.16.1&c=app
-- Every call carries a fresh salt (s) and token (t); dropping them from the key means one image
-- has one key, one download in flight and, with the cache, one stored copy.
-- To let pipelinehost sign the requests itself, from a stable URL, see subsonic.lua.
local subsonic_auth = { "u", "t", "s", "p", "v", "c" }

profile "thumbnail" {
  normalize  { drop_query = subsonic_auth },
  fetch      { timeout = 10, max_bytes = 20e6 },
  decode     { max_pixels = 50e6 },
  downsample { size = 300, fit = "cover" },
  encode     { format = "jpeg", quality = 82 },
}

profile "blurred-background" {
  normalize  { drop_query = subsonic_auth },
  fetch      { timeout = 10, max_bytes = 20e6 },
  decode     { max_pixels = 50e6 },
  downsample { size = 512 },
  blur       { sigma = 12, dim = 0.35 },
  encode     { format = "jpeg", quality = 75 },
}
