// An animation resized a changed box at a time.
//
// A screen recording's GIF stores, for most frames, the few characters that were typed: a box
// of 40 x 15 in a screen of 480 x 270. libvips composes every frame whole, and the resize then
// reads and writes every pixel of every frame, so a 120-frame recording cost 20 times
// gifsicle's wall, which resizes the stored boxes alone (BENCHMARKS.md, "Animations").
//
// Here the frames are computed in order into memory: the first whole, and each later one as a
// copy of the one before with only the pixels whose kernel reaches into what changed computed
// afresh. The resize is demand-driven, so asking for those pixels reads only the source rows
// they need. The answer is the same, pixel for pixel, as computing every frame whole: an output
// pixel is a sum over the source pixels under its kernel, and where none of those changed, the
// sum is the frame before's. PIPELINEHOST_FRAME_CHANGES=0 computes every frame whole.
#include "ph_internal.h"
#include "ph_vips.h"

#include <math.h>
#include <string.h>

static atomic_int switch_cache = -1;
static atomic_long resizes;

long ph_frame_change_resizes(void) { return atomic_load(&resizes); }

// The output pixels along one axis (of `length`) that read any source pixel in [first, last]:
// Lanczos 3 reaches 3 output pixels each side of its centre; libvips' resize may box-shrink
// by a whole factor first (at most another output pixel), and each pass has its own rounding
// of the centre (a pixel more each side). An empty span has `*lo` > `*hi`.
static void reached(int first, int last, double factor, int offset, int length, int *lo, int *hi) {
    double reach = 4 * factor + 1;
    *lo = VIPS_MAX(0, (int)floor((first + 0.5 - reach) / factor - 0.5) - 1 - offset);
    *hi = VIPS_MIN(length - 1, (int)ceil((last + 0.5 + reach) / factor - 0.5) + 1 - offset);
}

// The box of an output frame (`width` x `height`) that reads any pixel of `changed`, a box of
// the source frame.
static VipsRect output_box(const VipsRect *changed, const ph_frame_geometry *geometry, int width, int height) {
    VipsRect box = {0, 0, 0, 0};
    if (vips_rect_isempty(changed)) return box;
    int left, right, top, bottom;
    reached(changed->left, VIPS_RECT_RIGHT(changed) - 1, geometry->across, geometry->left, width, &left, &right);
    reached(changed->top, VIPS_RECT_BOTTOM(changed) - 1, geometry->down, geometry->top, height, &top, &bottom);
    if (left <= right && top <= bottom) box = (VipsRect){left, top, right - left + 1, bottom - top + 1};
    return box;
}

// Computes frame k's box `box` of `in` into frame k of `memory`.
static int compute_box(VipsRegion *region, VipsImage *memory, int k, const VipsRect *box) {
    int page = vips_image_get_page_height(memory);
    VipsRect area = {box->left, k * page + box->top, box->width, box->height};
    if (vips_region_prepare(region, &area)) return -1;
    size_t bytes = (size_t)area.width * VIPS_IMAGE_SIZEOF_PEL(memory);
    for (int y = area.top; y < VIPS_RECT_BOTTOM(&area); y++)
        memcpy(VIPS_IMAGE_ADDR(memory, area.left, y), VIPS_REGION_ADDR(region, area.left, y), bytes);
    return 0;
}

int ph_copy_changed_frames(VipsImage *in, const ph_frame_geometry *geometry, const VipsRect *changed, int count,
                           VipsImage **out) {
    int page = vips_image_get_page_height(in), frames = in->Ysize / page;
    if (count != frames || frames < 2 || geometry->across < 1 || geometry->down < 1 ||
        ph_switched_off("PIPELINEHOST_FRAME_CHANGES", &switch_cache))
        return 1;
    VipsRect *boxes = g_new(VipsRect, frames);
    double computed = 0;
    for (int k = 0; k < frames; k++) {
        boxes[k] = k == 0 ? (VipsRect){0, 0, in->Xsize, page} : output_box(&changed[k], geometry, in->Xsize, page);
        computed += (double)boxes[k].width * boxes[k].height;
    }
    // One thread computes the boxes, where libvips' copy to memory runs on all its threads:
    // worth it where at most a half of a thread's share of the pixels is computed. A pan
    // changes every pixel; a screen recording a few in a hundred. Only a shrink comes here, so
    // the frames made are no larger than the decoded source's, which decode held to its budget.
    if (computed > (double)in->Xsize * in->Ysize / (2 * vips_concurrency_get())) {
        g_free(boxes);
        return 1;
    }
    VipsImage *memory = vips_image_new_memory();
    VipsRegion *region = NULL;
    int result = vips_image_pipelinev(memory, VIPS_DEMAND_STYLE_ANY, in, NULL) || vips_image_write_prepare(memory)
                     ? -1
                     : 0;
    if (!result) region = vips_region_new(in);
    size_t frame_bytes = VIPS_IMAGE_SIZEOF_LINE(memory) * page;
    for (int k = 0; k < frames && !result; k++) {
        if (ph_attached_kill_is_set()) {
            vips_error("pipelinehost", "cancelled");
            result = -1;
            break;
        }
        if (k > 0) memcpy(VIPS_IMAGE_ADDR(memory, 0, k * page), VIPS_IMAGE_ADDR(memory, 0, (k - 1) * page), frame_bytes);
        if (!vips_rect_isempty(&boxes[k])) result = compute_box(region, memory, k, &boxes[k]);
    }
    if (region) g_object_unref(region);
    if (!result) {
        size_t size = sizeof(ph_frame_changes) + sizeof(VipsRect) * (size_t)frames;
        ph_frame_changes *record = g_malloc(size);
        *record = (ph_frame_changes){in->Xsize, page, frames, VIPS_IMAGE_ADDR(memory, 0, 0),
                                     VIPS_IMAGE_SIZEOF_LINE(memory)};
        memcpy(record->boxes, boxes, sizeof(VipsRect) * (size_t)frames);
        vips_image_set_blob(memory, PH_FRAME_CHANGES_FIELD, (VipsCallbackFn)g_free, record, size);
    }
    g_free(boxes);
    if (result) {
        g_object_unref(memory);
        return -1;
    }
    atomic_fetch_add(&resizes, 1);
    *out = memory;
    return 0;
}
