// blur_faces' pixels: each face's box blurred in place, in every frame of an animation.
#include "ph_faces.h"

int ph_faces_blur(VipsImage *in, const ph_face_box *boxes, int count, double sigma, VipsImage **out) {
    int width = in->Xsize, page = vips_image_get_page_height(in), frames = in->Ysize / page;
    VipsImage *current = in;
    g_object_ref(current);
    for (int f = 0; f < frames; f++) {
        for (int i = 0; i < count; i++) {
            ph_face_box box = boxes[i];
            int left = MAX(0, box.x), top = MAX(0, box.y);
            int right = MIN(width, box.x + box.width), bottom = MIN(page, box.y + box.height);
            if (right - left < 2 || bottom - top < 2) continue;
            double radius = sigma > 0 ? sigma : MAX(1.0, MAX(right - left, bottom - top) / 6.0);
            VipsImage *part, *blurred, *cast, *joined;
            // The box's edge is blurred with pixels from outside it (clamped), so no seam shows.
            if (vips_extract_area(current, &part, left, f * page + top, right - left, bottom - top, NULL)) goto fail;
            int failed = vips_gaussblur(part, &blurred, radius, NULL);
            g_object_unref(part);
            if (failed) goto fail;
            failed = vips_cast(blurred, &cast, current->BandFmt, NULL);
            g_object_unref(blurred);
            if (failed) goto fail;
            failed = vips_insert(current, cast, &joined, left, f * page + top, NULL);
            g_object_unref(cast);
            if (failed) goto fail;
            g_object_unref(current);
            current = joined;
        }
    }
    *out = current;
    return 0;
fail:
    g_object_unref(current);
    return -1;
}
