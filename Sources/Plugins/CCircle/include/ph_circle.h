// The circle plugin's C side: a fixed-arity wrapper over the variadic libvips calls it needs,
// because Swift cannot call a C function that takes `...`. A target of its own, as
// docs/PLUGINS.md tells a third party to write one: the host's CVips holds only the host's own
// wrappers. 0 on success, -1 with the reason in libvips' error buffer.
#ifndef PH_CIRCLE_H
#define PH_CIRCLE_H

#include <vips/vips.h>

/// Keeps the centred circle that fits the image and makes the rest transparent (an alpha band),
/// or, with `flatten`, fills it with the background colour.
int ph_circle(VipsImage *in, int flatten, double red, double green, double blue, VipsImage **out);

#endif
