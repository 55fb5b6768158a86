-- Responsive images for a website: the page lists a few widths in srcset, the browser picks one,
-- and the format follows its Accept header. A URL can choose only the widths listed here, so
-- nobody can make the service compute (and store) a variant per pixel width.
--   <img src="/SIG/web/w:640/SOURCE"
--        srcset="/SIG/web/w:320/SOURCE 320w, /SIG/web/w:640/SOURCE 640w, /SIG/web/w:1280/SOURCE 1280w"
--        sizes="(max-width: 700px) 100vw, 640px">
-- Each path is signed with its options: pipelinehost sign web SOURCE --param w=320
profile "web" {
  params     { w = { 320, 640, 960, 1280, 1920, default = 640, hint = "Width" },
               q = { 60, 75, 85, default = 75 } },
  normalize  { drop_query = { "u", "t", "s", "p" } },
  fetch      { timeout = 10, max_bytes = 25e6 },
  cache      { disk = true },                  -- one original on disk serves every width
  decode     { max_pixels = 50e6 },
  downsample { width = param "w" },            -- never wider than the source (enlarge is off)
  encode     { format = "auto", quality = param "q" },
  cache      { memory = true },
}
