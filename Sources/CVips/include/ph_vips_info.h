// What `info` and the placeholder stage read from an image: metadata fields as text, and a
// small copy of the pixels as 8-bit sRGB RGBA. Same conventions as ph_vips.h.
#ifndef PH_VIPS_INFO_H
#define PH_VIPS_INFO_H

#include <stddef.h>
#include <vips/vips.h>

/// A metadata field as text (g_free it): "exif-ifd0-Make", "vips-loader", "heif-compression"...
/// NULL when the image has no such field.
char *ph_vips_field_string(VipsImage *image, const char *name);

/// An integer metadata field ("orientation"), or `fallback` when the image has none.
int ph_vips_field_int(VipsImage *image, const char *name, int fallback);

/// The sum of an integer-array metadata field ("delay": each frame's milliseconds), with its
/// length in `*count`; 0 with a count of 0 when the image has no such field.
long ph_vips_field_ints_sum(VipsImage *image, const char *name, int *count);

/// Whether the image has an alpha band.
int ph_vips_has_alpha(VipsImage *image);

/// Calls `visit` with the name of every metadata field whose name starts with `prefix`.
void ph_vips_fields(VipsImage *image, const char *prefix, void (*visit)(const char *name, void *context), void *context);

/// The image (sRGB, or grey, any band count and depth) as 8-bit RGBA, not premultiplied, into
/// a buffer of width * height * 4 bytes (g_free it). Computes the image's pixels: give it a
/// small one.
int ph_vips_rgba8(VipsImage *in, void **pixels, size_t *length);

#endif
