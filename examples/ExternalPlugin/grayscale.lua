-- Uses the stage this package adds: `.build/debug/pipelinehost-grayscale run grayscale.lua PHOTO`.
profile "grey" {
  fetch {},
  decode {},
  downsample { size = 300 },
  grayscale {},
  encode { format = "png" },
}
