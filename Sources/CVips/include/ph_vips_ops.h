// Fixed-arity wrappers for the image operations of the smaller stages (sharpen, rotate, flip,
// pad, trim, flatten, round_corners). Same rules as ph_vips.h: 0 on success, -1 with the reason
// in vips' error buffer; release every output with ph_vips_unref.
#ifndef PH_VIPS_OPS_H
#define PH_VIPS_OPS_H

#include <vips/vips.h>

/// libvips' unsharp mask on the lightness channel: `sigma` is the radius of the blur it
/// sharpens against; `amount` the slope for strong edges (libvips' m2, 3 by default). Works
/// in libvips' 16-bit Lab and gives 8-bit sRGB back.
int ph_vips_sharpen(VipsImage *in, double sigma, double amount, VipsImage **out);

/// Turns clockwise by 90, 180 or 270 degrees.
int ph_vips_rotate(VipsImage *in, int degrees, VipsImage **out);

/// Mirrors left-right (`horizontal`), or top-bottom.
int ph_vips_flip(VipsImage *in, int horizontal, VipsImage **out);

/// Places the image on a `width` x `height` canvas of `rgba` (0-255; the alpha is used only
/// when the image has an alpha band) at (x, y), fractions of the free space: (0.5, 0.5) centres
/// it, (0, 0) puts it top left. An image larger than the canvas is cropped at the same place.
int ph_vips_pad(VipsImage *in, int width, int height, double x, double y, const double rgba[4], VipsImage **out);

/// Removes a uniform border: the colour of the top-left pixel, within `threshold` (0-255).
/// An image of one colour throughout is left as it is.
int ph_vips_trim(VipsImage *in, double threshold, VipsImage **out);

/// Composes the image onto `rgb` (0-255) and drops its alpha band; without one it is unchanged.
int ph_vips_flatten(VipsImage *in, const double rgb[3], VipsImage **out);
/// The colour bands without the alpha, for an image known to be opaque.
int ph_vips_drop_alpha(VipsImage *in, VipsImage **out);

/// Makes the corners outside quarter circles of `radius` transparent (an alpha band is added,
/// or the existing one cut), softening the edge a little so it is not jagged.
int ph_vips_round_corners(VipsImage *in, int radius, VipsImage **out);

/// Draws `overlay` over `base` (a watermark): in sRGB with an alpha band, scaled so its width is
/// `scale` times the base's (0 keeps its size), its alpha multiplied by `opacity`, and placed at
/// (x, y), fractions of the free space inside a `margin` (1, 1 is the bottom-right corner). The
/// result has an alpha band only when the base had one.
int ph_vips_overlay(VipsImage *base, VipsImage *overlay, double scale, double opacity, double x, double y, int margin,
                    VipsImage **out);

#endif
