-- Both profiles for Subsonic cover art, from stable URLs such as
--   https://music.example/rest/getCoverArt?id=al-42
-- subsonic_auth signs every transfer, and only the transfer, with u, a fresh salt s,
-- t = md5(password + s), v and c. The password comes from $PIPELINEHOST_SECRET_SUBSONIC_PASSWORD, never from this
-- file, and never reaches a key, a log line or an output name.
--   PIPELINEHOST_SECRET_SUBSONIC_PASSWORD=... pipelinehost run examples/subsonic.lua --profile thumbnail URL...
local auth = subsonic_auth { user = "me", password_env = "PIPELINEHOST_SECRET_SUBSONIC_PASSWORD" }
local clean = normalize { drop_query = { "u", "t", "s", "p", "v", "c" } }  -- in case a URL carries old auth
-- The last good cover beats a blank: when the server is down or a revalidation fails, both
-- caches serve what they hold, flagged stale.
local original = cache { disk = true, on_error = "stale" }
local variant = cache { memory = true, disk = true, on_error = "stale" }

profile "thumbnail" {
  clean,
  auth,
  fetch      { timeout = 10, max_bytes = 20e6 },
  original,
  decode     { max_pixels = 50e6 },
  downsample { size = 300, fit = "cover" },
  encode     { format = "jpeg", quality = 82 },
  variant,
}

profile "blurred-background" {
  clean,
  auth,
  fetch      { timeout = 10, max_bytes = 20e6 },
  original,
  decode     { max_pixels = 50e6 },
  downsample { size = 128 },
  blur       { sigma = 12, dim = 0.35, size = 512 },
  encode     { format = "jpeg", quality = 75 },
  variant,
}
