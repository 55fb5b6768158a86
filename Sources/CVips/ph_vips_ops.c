#include "ph_internal.h"
#include "ph_vips.h"
#include "ph_vips_ops.h"

#include <math.h>

static int sharpen_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    return vips_sharpen(in, out, "sigma", parameters[0], "m2", parameters[1], NULL);
}

int ph_vips_sharpen(VipsImage *in, double sigma, double amount, VipsImage **out) {
    VipsImage *sharpened;
    const double parameters[] = {sigma, amount};
    if (ph_each_frame(in, sharpen_frame, parameters, &sharpened)) return -1;
    int result = ph_vips_to_srgb(sharpened, out);
    g_object_unref(sharpened);
    return result;
}

// Rotate, flip and round corners turn, mirror or cut each frame of an animation, not the strip
// of stacked frames (which would turn the strip sideways, play it backwards, or round only its
// ends).
static int rotate_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    int degrees = (int)parameters[0];
    VipsAngle angle = degrees == 90 ? VIPS_ANGLE_D90 : degrees == 180 ? VIPS_ANGLE_D180 : degrees == 270 ? VIPS_ANGLE_D270 : VIPS_ANGLE_D0;
    return vips_rot(in, out, angle, NULL);
}

int ph_vips_rotate(VipsImage *in, int degrees, VipsImage **out) {
    const double parameters[] = {degrees};
    return ph_each_frame(in, rotate_frame, parameters, out);
}

static int flip_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    return vips_flip(in, out, parameters[0] != 0 ? VIPS_DIRECTION_HORIZONTAL : VIPS_DIRECTION_VERTICAL, NULL);
}

int ph_vips_flip(VipsImage *in, int horizontal, VipsImage **out) {
    const double parameters[] = {horizontal};
    return ph_each_frame(in, flip_frame, parameters, out);
}

// One value per band of `in`: the colour's channels for the colour bands (the first for a
// grey image), then the alpha.
static VipsArrayDouble *ink_for(VipsImage *in, const double rgba[4]) {
    double ink[16];
    int bands = MIN(in->Bands, 16), alpha = vips_image_hasalpha(in);
    for (int i = 0; i < bands; i++) {
        if (alpha && i == bands - 1) ink[i] = rgba[3];
        else ink[i] = (alpha ? bands - 1 : bands) >= 3 ? rgba[MIN(i, 2)] : rgba[0];
    }
    return vips_array_double_new(ink, bands);
}

static int trim_in_memory(VipsImage *in, double threshold, VipsImage **out);

// Parameters: width, height, the gravity's x and y, then the background's r, g, b and alpha.
static int pad_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    int width = (int)parameters[0], height = (int)parameters[1];
    int left = (int)lround((width - in->Xsize) * parameters[2]), top = (int)lround((height - in->Ysize) * parameters[3]);
    VipsArrayDouble *background = ink_for(in, parameters + 4);
    int result = vips_embed(in, out, left, top, width, height, "extend", VIPS_EXTEND_BACKGROUND, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

// Each frame of an animation is padded on its own, not the strip of stacked frames.
int ph_vips_pad(VipsImage *in, int width, int height, double x, double y, const double rgba[4], VipsImage **out) {
    const double parameters[] = {width, height, x, y, rgba[0], rgba[1], rgba[2], rgba[3]};
    return ph_each_frame(in, pad_frame, parameters, out);
}

int ph_vips_trim(VipsImage *in, double threshold, VipsImage **out) {
    // Two passes (the corner, then the search) and a crop: from memory, since the image may
    // be a sequential read of its file, which can be read once.
    VipsImage *memory = vips_image_copy_memory(in);
    if (!memory) return -1;
    int result = trim_in_memory(memory, threshold, out);
    g_object_unref(memory);
    return result;
}

static int crop_frame(VipsImage *in, VipsImage **out, const double *box) {
    return vips_extract_area(in, out, (int)box[0], (int)box[1], (int)box[2], (int)box[3], NULL);
}

static int trim_in_memory(VipsImage *in, double threshold, VipsImage **out) {
    double *corner;
    int n;
    if (vips_getpoint(in, &corner, &n, 0, 0, NULL)) return -1;
    // The colour bands only: find_trim flattens an alpha away first.
    int colour = vips_image_hasalpha(in) ? n - 1 : n;
    VipsArrayDouble *background = vips_array_double_new(corner, colour);
    g_free(corner);
    // An animation gets one box, the union of its frames' boxes (against the first frame's
    // corner colour): no frame loses what it shows, and the picture does not jump.
    int page = vips_image_get_page_height(in), count = in->Ysize / page, failed = 0;
    int x0 = in->Xsize, y0 = page, x1 = 0, y1 = 0;
    for (int i = 0; i < count && !failed; i++) {
        VipsImage *frame;
        int left, top, width, height;
        if ((failed = vips_extract_area(in, &frame, 0, i * page, in->Xsize, page, NULL))) break;
        failed = vips_find_trim(frame, &left, &top, &width, &height, "threshold", threshold, "background", background,
                                NULL);
        g_object_unref(frame);
        if (failed || width <= 0 || height <= 0) continue;
        x0 = MIN(x0, left);
        y0 = MIN(y0, top);
        x1 = MAX(x1, left + width);
        y1 = MAX(y1, top + height);
    }
    vips_area_unref(VIPS_AREA(background));
    if (failed) return -1;
    if (x1 <= x0 || y1 <= y0) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    const double box[] = {x0, y0, x1 - x0, y1 - y0};
    return ph_each_frame(in, crop_frame, box, out);
}

int ph_vips_flatten(VipsImage *in, const double rgb[3], VipsImage **out) {
    if (!vips_image_hasalpha(in)) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    VipsArrayDouble *background = vips_array_double_new(rgb, in->Bands >= 4 ? 3 : 1);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

// Copies the colour bytes of each 8-bit pixel of one or three colours, leaving its alpha byte.
static int drop_alpha_generate(VipsRegion *out, void *sequence, void *a, void *b, gboolean *stop) {
    (void)a, (void)b, (void)stop;
    VipsRegion *ir = sequence;
    const VipsRect *r = &out->valid;
    if (vips_region_prepare(ir, r)) return -1;
    const int colours = out->im->Bands;
    for (int y = 0; y < r->height; y++) {
        const VipsPel *p = VIPS_REGION_ADDR(ir, r->left, r->top + y);
        VipsPel *q = VIPS_REGION_ADDR(out, r->left, r->top + y);
        if (colours == 3)
            for (int x = 0; x < r->width; x++, p += 4, q += 3) q[0] = p[0], q[1] = p[1], q[2] = p[2];
        else
            for (int x = 0; x < r->width; x++, p += 2) q[x] = p[0];
    }
    return 0;
}

static void without_alpha(VipsImage *image, void *state) {
    (void)state;
    image->Bands--;
}

int ph_vips_drop_alpha(VipsImage *in, VipsImage **out) {
    if (!vips_image_hasalpha(in)) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    // libvips' extract_band copies a pixel's bands one byte at a time in a loop over their size:
    // a tenth of the CPU of a screen recording's resize, where every GIF frame is opaque but
    // read with an alpha. The same bytes, copied with the band count known.
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || (in->Bands != 4 && in->Bands != 2))
        return vips_extract_band(in, out, 0, "n", in->Bands - 1, NULL);
    return ph_generated_image(in, without_alpha, drop_alpha_generate, NULL, out);
}

static int round_frame(VipsImage *in, VipsImage **out, const double *parameters);

int ph_vips_round_corners(VipsImage *in, int radius, VipsImage **out) {
    const double parameters[] = {radius};
    return ph_each_frame(in, round_frame, parameters, out);
}

static int round_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    int radius = (int)parameters[0];
    int w = in->Xsize, h = in->Ysize;
    int r = MIN(radius, MIN(w, h) / 2);
    VipsImage *scope = vips_image_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(VIPS_OBJECT(scope), 7);
    double on = 255, off = 0;
    // The mask: white, its four r x r corners black, then a filled quarter circle into each.
    if (vips_black(&t[0], w, h, NULL) || !(t[1] = vips_image_copy_memory(t[0]))) goto fail;
    if (vips_draw_rect(t[1], &on, 1, 0, 0, w, h, "fill", TRUE, NULL)) goto fail;
    if (r > 0) {
        int xs[2] = {0, w - r}, ys[2] = {0, h - r};
        int cx[2] = {r, w - 1 - r}, cy[2] = {r, h - 1 - r};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                if (vips_draw_rect(t[1], &off, 1, xs[i], ys[j], r, r, "fill", TRUE, NULL)) goto fail;
                if (vips_draw_circle(t[1], &on, 1, cx[i], cy[j], r, "fill", TRUE, NULL)) goto fail;
            }
    }
    if (vips_gaussblur(t[1], &t[2], 0.6, NULL) || vips_cast(t[2], &t[3], VIPS_FORMAT_UCHAR, NULL)) goto fail;
    if (vips_image_hasalpha(in)) {
        // Cut the existing alpha: alpha * mask / 255.
        if (vips_extract_band(in, &t[4], 0, "n", in->Bands - 1, NULL) ||
            vips_extract_band(in, &t[5], in->Bands - 1, NULL)) goto fail;
        VipsImage *product;
        if (vips_multiply(t[5], t[3], &product, NULL)) goto fail;
        int failed = vips_linear1(product, &t[6], 1.0 / 255, 0, "uchar", TRUE, NULL);
        g_object_unref(product);
        if (failed || vips_bandjoin2(t[4], t[6], out, NULL)) goto fail;
    } else if (vips_bandjoin2(in, t[3], out, NULL)) {
        goto fail;
    }
    g_object_unref(scope);
    return 0;
fail:
    g_object_unref(scope);
    return -1;
}

int ph_vips_overlay(VipsImage *base, VipsImage *overlay, double scale, double opacity, double x, double y, int margin,
                    VipsImage **out) {
    VipsImage *scope = vips_image_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(VIPS_OBJECT(scope), 9);
    VipsImage *mark = overlay, *under = base;
    if (ph_vips_to_srgb(mark, &t[0])) goto fail;
    mark = t[0];
    if (!vips_image_hasalpha(mark)) {
        if (vips_bandjoin_const1(mark, &t[1], 255, NULL)) goto fail;
        mark = t[1];
    }
    if (scale > 0) {
        if (vips_resize(mark, &t[2], scale * base->Xsize / mark->Xsize, NULL)) goto fail;
        mark = t[2];
    }
    if (opacity < 1) {
        double a[4] = {1, 1, 1, opacity}, b[4] = {0, 0, 0, 0};
        if (vips_linear(mark, &t[3], a, b, 4, "uchar", TRUE, NULL)) goto fail;
        mark = t[3];
    }
    // An animation is a strip of stacked frames: the mark is placed on each frame alike.
    int page = vips_image_get_page_height(base), frames = base->Ysize / page;
    int left = margin + (int)lround((base->Xsize - 2 * margin - mark->Xsize) * x);
    int top = margin + (int)lround((page - 2 * margin - mark->Ysize) * y);
    if (frames > 1) {
        // A frame-sized transparent canvas holding the mark, repeated down the strip.
        if (vips_embed(mark, &t[7], left, top, base->Xsize, page, NULL) ||
            vips_replicate(t[7], &t[8], 1, frames, NULL))
            goto fail;
        mark = t[8];
        left = top = 0;
    }
    int base_alpha = vips_image_hasalpha(base);
    if (!base_alpha) {
        if (vips_bandjoin_const1(base, &t[4], 255, NULL)) goto fail;
        under = t[4];
    }
    if (vips_composite2(under, mark, &t[5], VIPS_BLEND_MODE_OVER, "x", left, "y", top, NULL) ||
        vips_cast(t[5], &t[6], VIPS_FORMAT_UCHAR, NULL))
        goto fail;
    if (base_alpha) {
        g_object_ref(t[6]);
        *out = t[6];
    } else if (vips_extract_band(t[6], out, 0, "n", t[6]->Bands - 1, NULL)) {
        goto fail;
    }
    g_object_unref(scope);
    return 0;
fail:
    g_object_unref(scope);
    return -1;
}
