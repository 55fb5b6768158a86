-- Square avatars that keep the face, and a privacy variant that blurs every face. Needs the
-- face detector, the package trait Faces:
--   FACES=1 scripts/run examples/faces.lua portrait.jpg --output-dir out
--   FACES=1 scripts/run info examples/faces.lua portrait.jpg     -- lists the faces, upright
profile "avatar" {
  fetch      { timeout = 10, max_bytes = 20e6 },
  cache      { disk = true },
  decode     { max_pixels = 50e6 },
  faces      {},                                       -- on a copy of about 512 x 512, shrunk on load
  downsample { size = 300, fit = "cover", gravity = "faces" },  -- attention where there is no face
  encode     { format = "jpeg", quality = 82 },
  cache      { memory = true, disk = true },
}

profile "anonymous" {
  fetch      { timeout = 10, max_bytes = 20e6 },
  decode     { max_pixels = 50e6 },
  faces      {},
  downsample { size = 1200 },                          -- carries the faces through the resize
  blur_faces {},                                       -- on the small image, after the resize
  encode     { format = "jpeg", quality = 82 },
}
