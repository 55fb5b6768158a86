-- The profiles scripts/gallery renders on examples/sample.jpg into docs/gallery/, one per
-- stage or parameter that docs/GALLERY.md shows. Each is also a small working example.

profile "before" { fetch {}, decode {}, downsample { size = 240 }, encode { quality = 70 } }

profile "cover" { fetch {}, decode {}, downsample { size = 160, fit = "cover" }, encode { quality = 70 } }
profile "cover-attention" { fetch {}, decode {}, downsample { size = 160, fit = "cover", gravity = "attention" }, encode { quality = 70 } }
profile "cover-west" { fetch {}, decode {}, downsample { size = 160, fit = "cover", gravity = "west" }, encode { quality = 70 } }
profile "cover-focus" { fetch {}, decode {}, downsample { size = 160, fit = "cover", focus = { 0.85, 0.5 } }, encode { quality = 70 } }
profile "contain" {
  fetch {}, decode {},
  downsample { size = 200, fit = "contain", background = "#202020" },
  encode { quality = 70 },
}
profile "sharpen" { fetch {}, decode {}, downsample { size = 240 }, sharpen { sigma = 1 }, encode { quality = 70 } }
profile "blur" { fetch {}, decode {}, downsample { size = 240 }, blur { sigma = 6 }, encode { quality = 70 } }
profile "blur-dim" { fetch {}, decode {}, downsample { size = 240 }, blur { sigma = 6, dim = 0.4 }, encode { quality = 70 } }
profile "rotate" { fetch {}, decode {}, downsample { size = 240 }, rotate { angle = 90 }, encode { quality = 70 } }
profile "flip" { fetch {}, decode {}, downsample { size = 240 }, flip {}, encode { quality = 70 } }
profile "pad" {
  fetch {}, decode {},
  downsample { size = 200 },
  pad { width = 240, height = 200, background = "#ffffff", gravity = "east" },
  encode { quality = 70 },
}
profile "trim" {
  fetch {}, decode {},
  downsample { size = 200 },
  pad { width = 240, height = 200, background = "#ffffff" },
  trim {},
  encode { quality = 70 },
}
profile "round_corners" {
  fetch {}, decode {},
  downsample { size = 240 },
  round_corners { radius = 28, background = "#ffffff" },
  encode { quality = 70 },
}
profile "flatten" {
  fetch {}, decode {},
  downsample { size = 240 },
  round_corners { radius = 60 },
  flatten { background = "#ffcc00" },
  encode { quality = 70 },
}
profile "circle" { fetch {}, decode {}, downsample { size = 160, fit = "cover" }, circle { background = "#ffffff" }, encode { quality = 70 } }
profile "overlay" {
  fetch {}, decode {},
  downsample { size = 240 },
  overlay { image = "mark.png", gravity = "south_east", margin = 8, opacity = 0.8, scale = 0.5 },
  encode { quality = 70 },
}
