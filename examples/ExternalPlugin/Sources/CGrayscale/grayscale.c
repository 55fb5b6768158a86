#include "grayscale.h"

int grayscale_apply(VipsImage *in, VipsImage **out) {
    VipsImage *grey;
    // To one band of luminance (b-w), then back to three equal sRGB bands.
    if (vips_colourspace(in, &grey, VIPS_INTERPRETATION_B_W, NULL)) return -1;
    int result = vips_colourspace(grey, out, VIPS_INTERPRETATION_sRGB, NULL);
    g_object_unref(grey);
    return result;
}
