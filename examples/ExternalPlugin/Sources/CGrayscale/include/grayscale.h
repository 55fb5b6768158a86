// The plugin's C side: fixed-arity wrappers over the variadic libvips calls it needs, because
// Swift cannot call a C function that takes `...`. Same rules as the host's shim: 0 on success,
// -1 with the reason in libvips' error buffer.
#ifndef GRAYSCALE_H
#define GRAYSCALE_H

#include <vips/vips.h>

/// The image in shades of grey, as 8-bit sRGB (R = G = B), keeping an alpha band if it has one.
int grayscale_apply(VipsImage *in, VipsImage **out);

#endif
