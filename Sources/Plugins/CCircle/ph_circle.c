#include "ph_circle.h"

int ph_circle(VipsImage *in, int flatten, double red, double green, double blue, VipsImage **out) {
    // An animation is a strip of stacked frames: each frame gets its own circle.
    int w = in->Xsize, h = vips_image_get_page_height(in), frames = in->Ysize / h;
    VipsImage *scope = vips_image_new();
    VipsImage **t = (VipsImage **) vips_object_local_array(VIPS_OBJECT(scope), 6);
    VipsImage *colour = in;
    if (vips_image_hasalpha(in)) {
        if (vips_extract_band(in, &t[0], 0, "n", in->Bands - 1, NULL)) goto fail;
        colour = t[0];
    }
    // The mask: a filled circle on black, drawn into memory, its edge softened a little so it
    // is not jagged.
    if (vips_black(&t[1], w, h, NULL) || !(t[2] = vips_image_copy_memory(t[1]))) goto fail;
    double ink = 255;
    if (vips_draw_circle(t[2], &ink, 1, w / 2, h / 2, MIN(w, h) / 2, "fill", TRUE, NULL)) goto fail;
    if (vips_gaussblur(t[2], &t[3], 0.6, NULL) || vips_replicate(t[3], &t[5], 1, frames, NULL)) goto fail;
    if (vips_bandjoin2(colour, t[5], &t[4], NULL)) goto fail;
    if (flatten) {
        double rgb[3] = {red, green, blue};
        VipsArrayDouble *background = vips_array_double_new(rgb, 3);
        int failed = vips_flatten(t[4], out, "background", background, NULL);
        vips_area_unref(VIPS_AREA(background));
        if (failed) goto fail;
    } else {
        g_object_ref(t[4]);
        *out = t[4];
    }
    g_object_unref(scope);
    return 0;
fail:
    g_object_unref(scope);
    return -1;
}
