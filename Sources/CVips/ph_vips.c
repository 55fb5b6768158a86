#include "ph_internal.h"
#include "ph_vips.h"

#include <vips/vector.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <dlfcn.h>
#include <string.h>

// Truncated or damaged input is an error, never a grey half image. `n` is set only for several
// pages: single-page loaders (jpeg, png) have no such option and would refuse it.
static void load_options(char *text, size_t size, int pages) {
    if (pages > 1) snprintf(text, size, "[fail_on=truncated,n=%d]", pages);
    else snprintf(text, size, "[fail_on=truncated]");
}

// libvips logs warnings ("error in tile 0 x 120") straight to stderr through GLib. They go into
// ph_vips_errors.c's log, where a failure that logged no error finds its cause, and to stderr
// only when PIPELINEHOST_VIPS_WARNINGS is set.
static void keep_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    if (level & G_LOG_LEVEL_WARNING) ph_vips_log_warning(message);
    if (data) g_log_default_handler(domain, level, message, NULL);
}

// A switch in the environment is "0" or "1" (or unset); anything else is a start-up error that
// names it, not a silent guess.
static int check_switch(const char *name) {
    const char *value = g_getenv(name);
    if (!value || strcmp(value, "0") == 0 || strcmp(value, "1") == 0) return 0;
    vips_error("pipelinehost", "%s must be 0 or 1, not \"%.40s\"", name, value);
    return -1;
}

void *ph_next_definition(_Atomic(void *) *slot, const char *name) {
    void *found = atomic_load(slot);
    if (!found) {
        found = dlsym(RTLD_NEXT, name);
        atomic_store(slot, found);
    }
    return found;
}

int ph_switched_off(const char *name, atomic_int *cache) {
    int off = atomic_load(cache);
    if (off < 0) {
        const char *value = g_getenv(name);
        off = value && strcmp(value, "0") == 0;
        atomic_store(cache, off);
    }
    return off;
}

int ph_generated_image(VipsImage *in, void (*shape)(VipsImage *image, void *state), VipsGenerateFn generate,
                       void *state, VipsImage **out) {
    VipsImage *image = vips_image_new();
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL)) {
        g_object_unref(image);
        return -1;
    }
    if (shape) shape(image, state);
    g_object_ref(in);
    vips_object_local(image, in);
    if (vips_image_generate(image, vips_start_one, generate, vips_stop_one, in, state)) {
        g_object_unref(image);
        return -1;
    }
    *out = image;
    return 0;
}

static void *copy_field(VipsImage *from, const char *name, GValue *value, void *to) {
    static const char *const builtin[] = {"width",   "height",  "bands", "format", "coding",   "interpretation",
                                          "xoffset", "yoffset", "xres",  "yres",   "filename", NULL};
    (void)from;
    for (int i = 0; builtin[i]; i++)
        if (strcmp(name, builtin[i]) == 0) return NULL;
    // Blobs are copied, not shared: libvips 8.14's heifload hangs its ICC and EXIF bytes on the
    // header image's own memory, which goes when the header does.
    if (G_VALUE_HOLDS(value, VIPS_TYPE_BLOB)) {
        size_t length;
        const void *data = vips_value_get_blob(value, &length);
        vips_image_set_blob_copy((VipsImage *)to, name, data, length);
    } else {
        vips_image_set((VipsImage *)to, name, value);
    }
    return NULL;
}

int ph_to_srgb8(VipsImage *in, const char *who, VipsImage **out) {
    VipsImage *srgb;
    if (vips_colourspace(in, &srgb, VIPS_INTERPRETATION_sRGB, NULL)) return -1;
    int result = vips_cast_uchar(srgb, out, NULL);
    g_object_unref(srgb);
    if (result == 0 && (*out)->Bands != 3 && (*out)->Bands != 4) {
        vips_error(who, "%d bands, expected sRGB", (*out)->Bands);
        g_object_unref(*out);
        return -1;
    }
    return result;
}

void ph_copy_header_fields(VipsImage *header, VipsImage *image) {
    image->Type = header->Type;
    image->Xres = header->Xres;
    image->Yres = header->Yres;
    vips_image_map(header, copy_field, image);
}

static int start(const char *program) {
    if (ph_vips_start(program)) return -1;
    if (check_switch("PIPELINEHOST_VIPS_VECTOR") || check_switch("PIPELINEHOST_JPEG_HUGE_PAGES") ||
        check_switch("PIPELINEHOST_JPEG_EARLY_STOP") ||
        check_switch("PIPELINEHOST_COLOUR_TRANSFORM_CACHE") || check_switch("PIPELINEHOST_AVIF_LIBAVIF") ||
        check_switch("PIPELINEHOST_GIF_THREADS") || check_switch("PIPELINEHOST_REDUCEH") ||
        check_switch("PIPELINEHOST_FRAME_CHANGES"))
        return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, keep_log,
                      g_getenv("PIPELINEHOST_VIPS_WARNINGS") ? (gpointer)1 : NULL);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_block_untrusted_set(TRUE);
    // Writing JPEG XL reads only our own pixels; its loader stays blocked (see
    // ph_vips_allow_jxl_input).
    vips_operation_block_set("VipsForeignSaveJxl", FALSE);
    // Run-time generated SIMD code (liborc) makes resize and blur about a fifth cheaper. It is
    // on only behind ph_orc_guard.c's lock: liborc 0.4.33 races in its code allocator
    // (scripts/orc-race; BENCHMARKS.md). PIPELINEHOST_VIPS_VECTOR=0 turns it off (so does
    // libvips' own VIPS_NOVECTOR); =1 keeps it on even unguarded, to reproduce the race.
    const char *vector = g_getenv("PIPELINEHOST_VIPS_VECTOR");
    int wanted = vector ? strcmp(vector, "1") == 0 : ph_orc_guard_active();
    if (!wanted || g_getenv("VIPS_NOVECTOR")) vips_vector_set_enabled(FALSE);
    return 0;
}

// Started once for the process, whoever calls first (the pipeline, or a test's fixtures on
// another thread): a second start rewrote the module directory another thread was reading.
// A failed start is said again to each later caller, whose error mark is after the first's.
int ph_vips_init(const char *program, int concurrency) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int started;  // 1: started, 2: failed
    static char *failure;
    pthread_mutex_lock(&lock);
    int first = !started;
    if (first) {
        uint64_t mark = ph_vips_error_mark();
        started = start(program) == 0 ? 1 : 2;
        if (started == 2) failure = ph_vips_errors_since(mark);
    }
    int state = started;
    pthread_mutex_unlock(&lock);
    if (state == 2) {
        if (!first) vips_error("pipelinehost", "%s", failure ? failure : "libvips did not start");
        return -1;
    }
    if (concurrency > 0) vips_concurrency_set(concurrency);
    return 0;
}

int ph_vips_vector_enabled(void) { return vips_vector_isenabled(); }

static void *count_object(VipsObject *object, void *a, void *b) {
    (void)object; (void)b;
    (*(int *)a)++;
    return NULL;
}

ph_vips_usage ph_vips_current_usage(void) {
    ph_vips_usage usage = {0, vips_tracked_get_mem(), vips_tracked_get_allocs(), vips_tracked_get_files()};
    vips_object_map((VipsSListMap2Fn)count_object, &usage.objects, NULL);
    return usage;
}

const char *ph_vips_find_loader(const void *buffer, size_t length) {
    ph_vips_modules_for(buffer, length);
    return vips_foreign_find_load_buffer(buffer, length);
}

VipsImage *ph_vips_open(const void *buffer, size_t length, int pages) {
    if (ph_avif_is_sequence(buffer, length)) return ph_avif_sequence_open(buffer, length, pages);
    char options[64];
    load_options(options, sizeof options, pages);
    ph_vips_modules_for(buffer, length);
    return vips_image_new_from_buffer(buffer, length, options, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

int ph_gif_composes_opaque(const void *buffer, size_t length, int opaque) {
    if (opaque != PH_GIF_OPAQUE_IF_FIRST_IS) return opaque == 1;
    VipsImage *first = ph_vips_open(buffer, length, 1), *alpha = NULL;
    double least = 0;
    // Four bands, as libvips gives for a frame with a transparent index: the fourth is alpha.
    int solid = first && (first->Bands != 4 || (!vips_extract_band(first, &alpha, 3, NULL) &&
                                                !vips_min(alpha, &least, NULL) && least >= 255));
    if (alpha) g_object_unref(alpha);
    if (first) g_object_unref(first);
    return solid;
}

int ph_vips_page_count(VipsImage *image) {
    int pages = 1;
    if (!vips_image_get_typeof(image, VIPS_META_N_PAGES) || vips_image_get_int(image, VIPS_META_N_PAGES, &pages) != 0)
        return 1;
    return pages < 1 ? 1 : pages;
}

int ph_vips_loader_format(const void *buffer, size_t length, char *format, size_t size, int *blocked) {
    *blocked = 0;
    // Read by libavif (ph_avif_sequence.c), and allowed as AVIF is: by "heif".
    if (ph_avif_is_sequence(buffer, length)) {
        snprintf(format, size, "heif");
        return 1;
    }
    ph_vips_modules_for(buffer, length);
    const char *class_name = vips_foreign_find_load_buffer(buffer, length);
    if (!class_name) return 0;
    GType type = g_type_from_name(class_name);
    const char *nickname = type ? vips_nickname_find(type) : NULL;
    if (!nickname) nickname = class_name;
    const char *cut = strstr(nickname, "load");
    size_t keep = cut ? (size_t)(cut - nickname) : strlen(nickname);
    snprintf(format, size, "%.*s", (int)keep, nickname);
    *blocked = 0;
    if (type) {
        VipsOperationClass *class = VIPS_OPERATION_CLASS(g_type_class_ref(type));
        *blocked = (class->flags & VIPS_OPERATION_BLOCKED) != 0;
        g_type_class_unref(class);
    }
    return 1;
}

static uint64_t read_uint(const unsigned char *p, int bytes, int little) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; i++) value |= (uint64_t)p[little ? i : bytes - 1 - i] << (8 * (little ? i : bytes - 1 - i));
    return value;
}

int ph_tiff_page_count(const void *buffer, size_t length, int limit) {
    const unsigned char *b = buffer;
    if (length < 16) return 0;
    int little = b[0] == 'I' && b[1] == 'I';
    if (!little && !(b[0] == 'M' && b[1] == 'M')) return 0;
    uint64_t magic = read_uint(b + 2, 2, little);
    int big = magic == 43;
    if (magic != 42 && !big) return 0;
    // Classic TIFF: 2-byte entry count, 12-byte entries, 4-byte offsets; BigTIFF: 8, 20, 8.
    int count_size = big ? 8 : 2, entry_size = big ? 20 : 12, offset_size = big ? 8 : 4;
    uint64_t offset = read_uint(b + (big ? 8 : 4), offset_size, little);
    int pages = 0;
    while (offset != 0 && pages <= limit) {
        if (offset > length || length - offset < (uint64_t)count_size) break;
        uint64_t entries = read_uint(b + offset, count_size, little);
        if (entries > length / (uint64_t)entry_size) break;
        uint64_t next_at = offset + (uint64_t)count_size + entries * (uint64_t)entry_size;
        if (next_at > length || length - next_at < (uint64_t)offset_size) break;
        pages++;
        offset = read_uint(b + next_at, offset_size, little);
    }
    return pages;
}

int ph_vips_page_height(VipsImage *image) { return vips_image_get_page_height(image); }

static VipsInteresting interesting_for(ph_crop crop) {
    switch (crop.mode) {
    case PH_CROP_NONE: return VIPS_INTERESTING_NONE;
    case PH_CROP_ATTENTION: return VIPS_INTERESTING_ATTENTION;
    case PH_CROP_ENTROPY: return VIPS_INTERESTING_ENTROPY;
    default: return VIPS_INTERESTING_CENTRE;
    }
}

// The width and height as displayed: swapped when the EXIF orientation turns the image.
static void oriented_size(VipsImage *image, double *width, double *height) {
    *width = image->Xsize;
    *height = image->Ysize;
    if (vips_image_get_orientation_swap(image)) {
        double swap = *width;
        *width = *height;
        *height = swap;
    }
}

// A crop at a point is libvips' thumbnail to the box that covers (width, height) without
// cropping (the side that binds is kept, the other unbounded), then this crop.
static void cover_box(double source_width, double source_height, int *width, int *height) {
    if (source_width * *height > source_height * *width) *width = VIPS_MAX_COORD;
    else *height = VIPS_MAX_COORD;
}

static int crop_at(VipsImage *scaled, int width, int height, double x, double y, VipsImage **out) {
    int w = scaled->Xsize, h = scaled->Ysize;
    int cw = MIN(width, w), ch = MIN(height, h);
    int left = (int)lround(x * w - cw / 2.0), top = (int)lround(y * h - ch / 2.0);
    left = MAX(0, MIN(left, w - cw));
    top = MAX(0, MIN(top, h - ch));
    int result = vips_extract_area(scaled, out, left, top, cw, ch, NULL);
    g_object_unref(scaled);
    return result;
}

// Stacks `count` frames of one size into one animation whose page-height is a frame's height,
// taking the frames (and the array) from the caller; `result` is the caller's status so far,
// and nothing is joined when it is already an error.
static int stack_frames(VipsImage **frames, int count, int result, VipsImage **out) {
    VipsImage *joined = NULL;
    if (!result) result = vips_arrayjoin(frames, &joined, count, "across", 1, NULL);
    int height = result ? 0 : frames[0]->Ysize;
    for (int i = 0; i < count; i++)
        if (frames[i]) g_object_unref(frames[i]);
    g_free(frames);
    if (!result) {
        result = vips_copy(joined, out, NULL);
        if (!result) vips_image_set_int(*out, VIPS_META_PAGE_HEIGHT, height);
    }
    if (joined) g_object_unref(joined);
    return result;
}

// A cover crop of an animation. libvips' thumbnail keeps one frame when it crops (libvips
// #2668), so every frame is resized to cover the box uncropped, and one box is cut from each:
// placed at the crop's point, or where attention or entropy puts it on the first frame, so the
// picture does not jump from frame to frame.
static int crop_frames(VipsImage *scaled, int width, int height, ph_crop crop, ph_frame_geometry *geometry,
                       VipsImage **out) {
    int page = vips_image_get_page_height(scaled), count = scaled->Ysize / page;
    int w = scaled->Xsize, cw = MIN(width, w), ch = MIN(height, page), left, top;
    if (crop.mode == PH_CROP_ATTENTION || crop.mode == PH_CROP_ENTROPY) {
        VipsImage *first, *cut;
        if (vips_extract_area(scaled, &first, 0, 0, w, page, NULL)) return -1;
        int result = vips_smartcrop(first, &cut, cw, ch, "interesting", interesting_for(crop), NULL);
        g_object_unref(first);
        if (result) return -1;
        // vips_extract_area, which smartcrop ends with, records the box's corner as an offset.
        left = -cut->Xoffset;
        top = -cut->Yoffset;
        g_object_unref(cut);
    } else {
        double x = crop.mode == PH_CROP_AT ? crop.x : 0.5, y = crop.mode == PH_CROP_AT ? crop.y : 0.5;
        left = (int)lround(x * w - cw / 2.0);
        top = (int)lround(y * page - ch / 2.0);
    }
    left = MAX(0, MIN(left, w - cw));
    top = MAX(0, MIN(top, page - ch));
    geometry->left = left;
    geometry->top = top;
    // A box the frames' full height (a landscape animation in a square, say) is one cut down the
    // whole strip; one cut per frame, joined, costs libvips bookkeeping for every frame.
    if (ch == page) return vips_extract_area(scaled, out, left, 0, cw, scaled->Ysize, NULL);
    VipsImage **frames = g_new0(VipsImage *, count);
    int result = 0;
    for (int i = 0; i < count && !result; i++)
        result = vips_extract_area(scaled, &frames[i], left, i * page + top, cw, ch, NULL);
    return stack_frames(frames, count, result, out);
}

// The caller has opened any modules the bytes need (ph_vips_modules_for).
static int thumbnail_buffer(const void *buffer, size_t length, int width, int height, ph_crop crop, int enlarge,
                            int pages, VipsImage **out) {
    if (ph_avif_is_sequence(buffer, length)) {
        VipsImage *opened = ph_avif_sequence_open(buffer, length, pages);
        if (!opened) return -1;
        int result = ph_vips_thumbnail_image(opened, width, height, crop, enlarge, out);
        g_object_unref(opened);
        return result;
    }
    char options[64];
    load_options(options, sizeof options, pages);
    const char *loader = pages != 1 ? vips_foreign_find_load_buffer(buffer, length) : NULL;
    if (loader && strcmp(loader, "VipsForeignLoadNsgifBuffer") == 0) {
        // GIF has no shrink on load: its frames are opened and resized each on its own
        // (ph_vips_thumbnail_image), where libvips' thumbnail would resize them as one image.
        VipsImage *opened = vips_image_new_from_buffer((void *)buffer, length, options, "access",
                                                       VIPS_ACCESS_SEQUENTIAL, NULL);
        if (!opened) return -1;
        int result = ph_vips_thumbnail_gif_frames(opened, buffer, length, width, height, crop, enlarge, out);
        g_object_unref(opened);
        return result;
    }
    VipsSize size = enlarge ? VIPS_SIZE_BOTH : VIPS_SIZE_DOWN;
    int animated = pages != 1 && crop.mode != PH_CROP_NONE;
    if (crop.mode != PH_CROP_AT && !animated)
        return vips_thumbnail_buffer((void *)buffer, length, out, width, "height", height, "crop", interesting_for(crop),
                                     "size", size, "option_string", options, NULL);
    VipsImage *header = vips_image_new_from_buffer((void *)buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!header) return -1;
    double source_width, source_height;
    oriented_size(header, &source_width, &source_height);
    g_object_unref(header);
    int box_width = width, box_height = height;
    cover_box(source_width, source_height, &box_width, &box_height);
    VipsImage *scaled;
    if (vips_thumbnail_buffer((void *)buffer, length, &scaled, box_width, "height", box_height, "size", size,
                              "option_string", options, NULL))
        return -1;
    if (!animated) return crop_at(scaled, width, height, crop.x, crop.y, out);
    ph_frame_geometry geometry;
    int result = crop_frames(scaled, width, height, crop, &geometry, out);
    g_object_unref(scaled);
    return result;
}

int ph_vips_thumbnail_buffer(const void *buffer, size_t length, int width, int height, ph_crop crop,
                             int enlarge, int pages, VipsImage **out) {
    ph_vips_modules_for(buffer, length);
    return thumbnail_buffer(buffer, length, width, height, crop, enlarge, pages, out);
}

int ph_vips_thumbnail_buffer_draft(const void *buffer, size_t length, int width, int height, ph_crop crop,
                                   int enlarge, int pages, VipsImage **out) {
    ph_vips_modules_for(buffer, length);
    // libvips has no loader for an AVIF sequence, and asking would leave an error behind.
    if (ph_avif_is_sequence(buffer, length))
        return thumbnail_buffer(buffer, length, width, height, crop, enlarge, pages, out);
    const char *loader = vips_foreign_find_load_buffer(buffer, length);
    VipsImage *loaded;
    if (pages == 1 && loader && strcmp(loader, "VipsForeignLoadHeifBuffer") == 0 &&
        ph_avif_load(buffer, length, &loaded)) {
        int result = ph_vips_thumbnail_image(loaded, width, height, crop, enlarge, out);
        g_object_unref(loaded);
        return result;
    }
    if (pages > 1) return thumbnail_buffer(buffer, length, width, height, crop, enlarge, pages, out);
    int shrink = ph_vips_jpeg_draft_shrink(buffer, length, width, height, crop.mode != PH_CROP_NONE);
    if (shrink <= 1) return shrink < 0 ? -1 : thumbnail_buffer(buffer, length, width, height, crop, enlarge, pages, out);
    if (ph_vips_jpeg_draft(buffer, length, shrink, &loaded)) return -1;
    int result = ph_vips_thumbnail_image(loaded, width, height, crop, enlarge, out);
    g_object_unref(loaded);
    return result;
}

int ph_vips_jpeg_draft_shrink(const void *buffer, size_t length, int width, int height, int fill) {
    if (ph_avif_is_sequence(buffer, length)) return 1;
    const char *loader = vips_foreign_find_load_buffer(buffer, length);
    if (!loader || strcmp(loader, "VipsForeignLoadJpegBuffer") != 0) return 1;
    VipsImage *header = vips_image_new_from_buffer((void *)buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!header) return -1;
    double source_width, source_height;
    oriented_size(header, &source_width, &source_height);
    g_object_unref(header);
    double across = source_width / width, down = source_height / height;
    double factor = fill ? (across < down ? across : down) : (across > down ? across : down);
    int shrink = factor >= 8 ? 8 : factor >= 4 ? 4 : factor >= 2 ? 2 : 1;
    // libvips 8.14's jpegload aborts (a failed assertion, "bad dimensions") when a side is
    // shorter than the shrink: a 4x2568 JPEG fit into 48 px would take 1/8. No shrink leaves a
    // side under one pixel; libvips' thumbnail then makes that side 1 px, as for any format.
    while (shrink > 1 && (source_width < shrink || source_height < shrink)) shrink /= 2;
    return shrink;
}

int ph_vips_jpeg_draft(const void *buffer, size_t length, int shrink, VipsImage **out) {
    if (!ph_jpeg_load_needed_scans(buffer, length, shrink, out) && ph_jpeg_load_whole(buffer, length, shrink, out))
        return -1;
    return 0;
}

// Parameters: the box's width and height, and the VipsSize.
static int thumbnail_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    return vips_thumbnail_image(in, out, (int)parameters[0], "height", (int)parameters[1], "size",
                                (VipsSize)parameters[2], NULL);
}

// An animation resized into the box as libvips' thumbnail resizes it (the same shrink and frame
// size), but each frame on its own: down the columns frame by frame (ph_reducev_frames), so no
// frame's edge rows take colour from its neighbours, then across the rows with libvips' resize,
// whose vscale of 1 makes no vertical pass. Alpha is premultiplied for the resize, as thumbnail
// does. An enlargement goes through a thumbnail of each frame (libvips' resize upsizes with an
// affine that shifts the rows too), which costs libvips' bookkeeping for a pipeline a frame.
// 1 (nothing made, no error) for what thumbnail itself must do: a colour profile to import,
// bands of other than 8 bits, or a shrink past ph_reducev_frames' most taps (80).
// `geometry` says how the frames were resized, where ph_reducev_frames did it (across 0 where not).
static int thumbnail_frames(VipsImage *in, int box_width, int box_height, VipsSize size, ph_frame_geometry *geometry,
                            VipsImage **out) {
    *geometry = (ph_frame_geometry){0, 0, 0, 0};
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || vips_image_get_typeof(in, VIPS_META_ICC_NAME))
        return 1;
    int page = vips_image_get_page_height(in), count = in->Ysize / page;
    // vips_thumbnail_calculate_shrink for a box without a crop, on one frame.
    double shrink = VIPS_MAX((double)in->Xsize / box_width, (double)page / box_height);
    if (size == VIPS_SIZE_DOWN) shrink = VIPS_MAX(shrink, 1);
    double hshrink = VIPS_MIN(shrink, in->Xsize), vshrink = VIPS_MIN(shrink, page);
    int page_out = VIPS_MAX(1, (int)rint(page / vshrink));
    if ((double)page_out * count > VIPS_MAX_COORD || vshrink > 80) return 1; // ph_reducev_frames' most taps
    if (hshrink < 1 || vshrink < 1) {
        const double parameters[] = {box_width, box_height, size};
        return ph_each_frame(in, thumbnail_frame, parameters, out) ? -1 : 0;
    }
    VipsImage *t[5] = {NULL};
    int alpha = vips_image_hasalpha(in), result = 0;
    VipsImage *ready = in;
    if (alpha) {
        result = vips_premultiply(in, &t[0], NULL);
        ready = t[0];
    }
    // Lanczos 3 at the whole shrink, not libvips' resize's box average of whole rows first: the
    // box blurs text (a screen recording's frames 47.8 dB against Pillow's Lanczos, falling to
    // 33.9 dB as text fills the frame, where this gives 76.7 and 59.9), for a quarter more CPU.
    // Down the columns first: both orders sum the same taps, and ph_reducev_frames reads whole
    // rows where the horizontal pass gathers, so the larger pass is the cheaper one.
    if (!result) result = ph_reducev_frames(ready, page, page_out, &t[1]);
    if (!result) result = vips_resize(t[1], &t[2], 1.0 / hshrink, "vscale", 1.0, NULL);
    if (!result && alpha) {
        result = vips_unpremultiply(t[2], &t[3], NULL);
        if (!result) result = vips_cast(t[3], &t[4], VIPS_FORMAT_UCHAR, NULL);
    }
    if (!result) {
        *out = alpha ? t[4] : t[2];
        g_object_ref(*out);
        *geometry = (ph_frame_geometry){hshrink, (double)page / page_out, 0, 0};
    }
    for (int i = 0; i < 5; i++)
        if (t[i]) g_object_unref(t[i]);
    return result ? -1 : 0;
}

// The animation `scaled` (in memory where `changed` says what changed from frame to frame of `in`'s
// source, and computing a changed box at a time is quicker), or -1. Takes `scaled`.
static int frames_computed(VipsImage *scaled, const ph_frame_geometry *geometry, const VipsRect *changed, int count,
                           VipsImage **out) {
    if (!changed || geometry->across == 0) {
        *out = scaled;
        return 0;
    }
    int made = ph_copy_changed_frames(scaled, geometry, changed, count, out);
    if (made == 1) {
        *out = scaled;
        return 0;
    }
    g_object_unref(scaled);
    return made;
}

// ph_vips_thumbnail_image, with what changed from frame to frame (ph_gif_read_changes) where
// known: `count` boxes at `changed`, or NULL.
static int thumbnail_image(VipsImage *in, int width, int height, ph_crop crop, int enlarge, const VipsRect *changed,
                           int count, VipsImage **out) {
    VipsSize size = enlarge ? VIPS_SIZE_BOTH : VIPS_SIZE_DOWN;
    int page = vips_image_get_page_height(in), animated = page != in->Ysize && crop.mode != PH_CROP_NONE;
    ph_frame_geometry geometry;
    if (page != in->Ysize && crop.mode == PH_CROP_NONE) {
        VipsImage *scaled;
        int made = thumbnail_frames(in, width, height, size, &geometry, &scaled);
        if (made <= 0) return made < 0 ? -1 : frames_computed(scaled, &geometry, changed, count, out);
    }
    if (crop.mode != PH_CROP_AT && !animated)
        return vips_thumbnail_image(in, out, width, "height", height, "crop", interesting_for(crop), "size", size, NULL);
    double source_width, source_height;
    oriented_size(in, &source_width, &source_height);
    if (animated) {  // one frame's size: an animation is one tall image, never turned by EXIF
        source_width = in->Xsize;
        source_height = page;
    }
    int box_width = width, box_height = height;
    cover_box(source_width, source_height, &box_width, &box_height);
    VipsImage *scaled, *cut;
    int made = animated ? thumbnail_frames(in, box_width, box_height, size, &geometry, &scaled) : 1;
    if (made < 0) return -1;
    if (made > 0 && vips_thumbnail_image(in, &scaled, box_width, "height", box_height, "size", size, NULL)) return -1;
    if (!animated) return crop_at(scaled, width, height, crop.x, crop.y, out);
    int result = crop_frames(scaled, width, height, crop, &geometry, &cut);
    g_object_unref(scaled);
    if (result) return -1;
    return frames_computed(cut, &geometry, changed, count, out);
}

int ph_vips_thumbnail_image(VipsImage *in, int width, int height, ph_crop crop, int enlarge, VipsImage **out) {
    return thumbnail_image(in, width, height, crop, enlarge, NULL, 0, out);
}

int ph_vips_thumbnail_gif_frames(VipsImage *in, const void *gif, size_t length, int width, int height, ph_crop crop,
                                 int enlarge, VipsImage **out) {
    int page = vips_image_get_page_height(in), frames = in->Ysize / page;
    VipsRect *changed = frames > 1 ? g_new(VipsRect, frames) : NULL;
    int count = changed ? ph_gif_read_changes(gif, length, changed, frames) : 0;
    // The boxes are in the screen's pixels: only for frames that are the screen's size.
    int known = count == frames && in->Xsize == changed[0].width && page == changed[0].height;
    int result = thumbnail_image(in, width, height, crop, enlarge, known ? changed : NULL, count, out);
    g_free(changed);
    return result;
}

// Orientations 3 to 8 (a half or quarter turn, a vertical flip) read the image out of order, and
// an image decode opened reads its file once, top to bottom: a JPEG of more than a few hundred
// rows would fail ("out of order read"). It is decoded into memory first; 1 and 2 read in order.
int ph_vips_autorotate(VipsImage *in, VipsImage **out) {
    int orientation = vips_image_get_orientation(in);
    if (orientation < 3 || orientation > 8) return vips_autorot(in, out, NULL);
    VipsImage *whole = vips_image_copy_memory(in);
    if (!whole) return -1;
    int result = vips_autorot(whole, out, NULL);
    g_object_unref(whole);
    return result;
}

struct ph_vips_kill { atomic_int set; };

ph_vips_kill *ph_vips_kill_new(void) { return calloc(1, sizeof(ph_vips_kill)); }
void ph_vips_kill_set(ph_vips_kill *kill) { atomic_store(&kill->set, 1); }
int ph_vips_kill_is_set(const ph_vips_kill *kill) { return kill && atomic_load(&kill->set); }
void ph_vips_kill_free(ph_vips_kill *kill) { free(kill); }

// The kill flag of the work the calling thread runs; read on that thread and handed to the
// worker threads through the pass-through image below.
static __thread ph_vips_kill *attached_kill = NULL;
void ph_vips_kill_attach(ph_vips_kill *kill) { attached_kill = kill; }
int ph_attached_kill_is_set(void) { return ph_vips_kill_is_set(attached_kill); }

// The pass-through between an image and what computes it (a saver, a memory copy): each region
// asked for is the input's region itself (no copy). A failure to produce it is noted in
// `failed`; a set kill flag stops it before it is produced.
typedef struct {
    int failed;
    ph_vips_kill *kill;
    ph_handover handover; // this state lives on the caller's stack
} watch_state;

static int watch_generate(VipsRegion *out, void *sequence, void *a, void *b, gboolean *stop) {
    VipsRegion *input = (VipsRegion *)sequence;
    watch_state *state = (watch_state *)b;
    (void)a;
    (void)stop;
    ph_handover_enter(&state->handover);
    int result;
    if (ph_vips_kill_is_set(state->kill)) {
        vips_error("pipelinehost", "cancelled");
        result = -1;
    } else if (vips_region_prepare(input, &out->valid)) {
        g_atomic_int_set(&state->failed, 1);
        result = -1;
    } else {
        result = vips_region_region(out, input, &out->valid, out->valid.left, out->valid.top);
    }
    ph_handover_leave(&state->handover);
    return result;
}

// The computation through `state` has returned: every worker's use of it happened before this.
static void watch_done(watch_state *state) { ph_handover_back(&state->handover); }

// `source` behind a watch; NULL on failure. The caller computes the result before `state` goes.
static VipsImage *watched(VipsImage *source, VipsDemandStyle style, watch_state *state) {
    ph_handover_give(&state->handover);
    VipsImage *image = vips_image_new();
    if (vips_image_pipelinev(image, style, source, NULL) ||
        vips_image_generate(image, vips_start_one, watch_generate, vips_stop_one, source, state)) {
        g_object_unref(image);
        return NULL;
    }
    return image;
}

int ph_vips_copy_memory(VipsImage *in, VipsImage **out) {
    // Already computed into memory (an animation resized a changed box at a time): nothing to
    // compute, so nothing to stop.
    if (!attached_kill || in->dtype == VIPS_IMAGE_SETBUF) {
        *out = vips_image_copy_memory(in);
        return *out ? 0 : -1;
    }
    watch_state state = {0, attached_kill, {0}};
    VipsImage *through = watched(in, VIPS_DEMAND_STYLE_ANY, &state);
    *out = through ? vips_image_copy_memory(through) : NULL;
    watch_done(&state);
    if (through) g_object_unref(through);
    return *out ? 0 : -1;
}

void ph_vips_set_concurrency(int threads) { vips_concurrency_set(threads); }

static int ph_vips_to_srgb_values(VipsImage *in, VipsImage **out);

// Set on an image whose pixels were transformed to sRGB here: it carries the sRGB profile from
// then on, and the stages after (sharpen, overlay) need not transform it again. Metadata travels
// from an operation's input to its output; savers write only EXIF, XMP, IPTC and ICC.
static const char *const srgb_done = "pipelinehost-srgb";

int ph_vips_to_srgb(VipsImage *in, VipsImage **out) {
    if (vips_image_get_typeof(in, VIPS_META_ICC_NAME) && !vips_image_get_typeof(in, srgb_done)) {
        VipsImage *transformed;
        // The common case, with a transform built once per profile (ph_colour_transforms.c);
        // 1 means "not this image", which libvips then handles.
        int kept = ph_vips_icc_to_srgb_kept(in, &transformed);
        if (kept < 0) return -1;
        // A profile that does not fit the pixels (a broken file) is dropped, not fatal.
        if (kept == 0 || vips_icc_transform(in, &transformed, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_RELATIVE,
                               "depth", 8, NULL) == 0) {
            vips_image_set_int(transformed, srgb_done, 1);
            int result = ph_vips_to_srgb_values(transformed, out);
            g_object_unref(transformed);
            return result;
        }
        vips_error_clear();
    }
    return ph_vips_to_srgb_values(in, out);
}

int ph_vips_device_colours(VipsImage *in, VipsImage **out) {
    if (vips_copy(in, out, NULL)) return -1;
    vips_image_remove(*out, VIPS_META_ICC_NAME);
    return 0;
}

// The colourspace conversion alone, for pixels whose profile has been applied (or that have none).
static int ph_vips_to_srgb_values(VipsImage *in, VipsImage **out) {
    if (vips_image_guess_interpretation(in) == VIPS_INTERPRETATION_sRGB &&
        vips_image_get_format(in) == VIPS_FORMAT_UCHAR) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL);
}

int ph_each_frame(VipsImage *in, ph_frame_filter filter, const double *parameters, VipsImage **out) {
    int page = vips_image_get_page_height(in);
    if (page >= in->Ysize) return filter(in, out, parameters);
    int count = in->Ysize / page, result = 0;
    VipsImage **frames = g_new0(VipsImage *, count);
    for (int i = 0; i < count && !result; i++) {
        VipsImage *frame;
        if ((result = vips_extract_area(in, &frame, 0, i * page, in->Xsize, page, NULL))) break;
        result = filter(frame, &frames[i], parameters);
        g_object_unref(frame);
    }
    // The frames' height is the filtered one (a quarter turn swaps it with the width).
    return stack_frames(frames, count, result, out);
}

static int gaussblur_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    return vips_gaussblur(in, out, parameters[0], "precision",
                          parameters[1] != 0 ? VIPS_PRECISION_APPROXIMATE : VIPS_PRECISION_INTEGER, NULL);
}

int ph_vips_gaussblur(VipsImage *in, double sigma, int approximate, VipsImage **out) {
    const double parameters[] = {sigma, approximate};
    return ph_each_frame(in, gaussblur_frame, parameters, out);
}

static int rescale_frame(VipsImage *in, VipsImage **out, const double *parameters) {
    return vips_resize(in, out, parameters[0], "vscale", parameters[1], "kernel", VIPS_KERNEL_LINEAR, NULL);
}

int ph_vips_rescale(VipsImage *in, double hscale, double vscale, VipsImage **out) {
    const double parameters[] = {hscale, vscale};
    return ph_each_frame(in, rescale_frame, parameters, out);
}

int ph_vips_darken(VipsImage *in, double factor, VipsImage **out) {
    int bands = vips_image_get_bands(in);
    int colour = vips_image_hasalpha(in) ? bands - 1 : bands;
    double a[16], b[16];
    if (bands > 16) {
        vips_error("ph_vips_darken", "too many bands (%d)", bands);
        return -1;
    }
    for (int i = 0; i < bands; i++) {
        a[i] = i < colour ? factor : 1.0;
        b[i] = 0.0;
    }
    return vips_linear(in, out, a, b, bands, "uchar", TRUE, NULL);
}

static VipsForeignSubsample subsample_mode(ph_subsample subsample) {
    return subsample == PH_SUBSAMPLE_ON ? VIPS_FOREIGN_SUBSAMPLE_ON
        : subsample == PH_SUBSAMPLE_OFF ? VIPS_FOREIGN_SUBSAMPLE_OFF : VIPS_FOREIGN_SUBSAMPLE_AUTO;
}

// Every option each saver takes is passed, so the calls stay fixed-arity; the effort comes fitted
// to the encoder (EncodeStage.encoderEffort).
static int save_as(VipsImage *in, ph_format format, const ph_save_options *o, const ph_gif_palette *palettes,
                   int palette_count, int strip, void **buffer, size_t *length) {
    switch (format) {
    case PH_FORMAT_JPEG:
        return vips_jpegsave_buffer(in, buffer, length, "Q", o->quality, "strip", strip, "interlace", o->progressive,
                                    "subsample_mode", subsample_mode(o->subsample), "optimize_coding",
                                    o->optimize_coding, NULL);
    case PH_FORMAT_PNG:
        // The effort is zlib's level. libvips 8.14 filters no rows by default; libpng's adaptive
        // filters (what Pillow and libpng's own tools use) make a photo's PNG about a third
        // smaller, and at level 4 for less CPU than libvips' default (no filter, level 6).
        // Effort 0 is the fastest: no filter, level 1.
        return vips_pngsave_buffer(in, buffer, length, "strip", strip, "interlace", o->progressive, "compression",
                                   o->effort == 0 ? 1 : o->effort, "filter",
                                   o->effort == 0 ? VIPS_FOREIGN_PNG_FILTER_NONE : VIPS_FOREIGN_PNG_FILTER_ALL,
                                   NULL);
    case PH_FORMAT_WEBP:
        return vips_webpsave_buffer(in, buffer, length, "Q", o->quality, "strip", strip, "lossless", o->lossless,
                                    "effort", o->effort, NULL);
    case PH_FORMAT_AVIF:
        ph_vips_open_modules();
        // libheif 1.15 writes stills only; an animation is a sequence written by libavif.
        if (vips_image_get_page_height(in) < in->Ysize) return ph_avif_save_sequence(in, o, buffer, length);
        return vips_heifsave_buffer(in, buffer, length, "Q", o->quality, "strip", strip, "lossless", o->lossless,
                                    "effort", o->effort, "subsample_mode", subsample_mode(o->subsample),
                                    "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, NULL);
    case PH_FORMAT_GIF:
        return ph_gif_save_buffer(in, strip, o->effort, ph_gif_threads(), palettes, palette_count, buffer,
                                  length);
    case PH_FORMAT_JXL:
        ph_vips_open_modules();
        return vips_jxlsave_buffer(in, buffer, length, "Q", o->quality, "strip", strip, "lossless", o->lossless,
                                   "effort", o->effort, NULL);
    }
    vips_error("ph_vips_save", "unknown format %d", (int)format);
    return -1;
}

// Metadata other than the ICC profile: removed before every stripping save.
static void *collect_metadata(VipsImage *image, const char *field, GValue *value, void *names) {
    (void)image;
    (void)value;
    if (strcmp(field, VIPS_META_ICC_NAME) != 0 &&
        (g_str_has_prefix(field, "exif-") || g_str_has_prefix(field, "xmp-") || g_str_has_prefix(field, "iptc-") ||
         strcmp(field, "orientation") == 0))
        g_ptr_array_add((GPtrArray *)names, g_strdup(field));
    return NULL;
}

// libvips 8.14's JPEG saver writes a fresh EXIF block whenever it does not strip, so a JPEG
// that keeps only its ICC profile is saved stripped and gets the profile back as APP2
// "ICC_PROFILE" segments right after SOI, laid out as the ICC specification says.
static int jpeg_with_icc(void **buffer, size_t *length, VipsImage *image) {
    const void *icc;
    size_t icc_length;
    if (vips_image_get_blob(image, VIPS_META_ICC_NAME, &icc, &icc_length)) return -1;
    const size_t chunk = 65519;
    size_t count = (icc_length + chunk - 1) / chunk;
    if (count == 0 || count > 255 || *length < 2) return 0;
    size_t total = *length + icc_length + count * 18;
    unsigned char *out = g_malloc(total), *p = out;
    const unsigned char *old = *buffer;
    *p++ = old[0];
    *p++ = old[1];
    for (size_t i = 0; i < count; i++) {
        size_t n = MIN(chunk, icc_length - i * chunk), segment = 2 + 14 + n;
        *p++ = 0xFF;
        *p++ = 0xE2;
        *p++ = (unsigned char)(segment >> 8);
        *p++ = (unsigned char)(segment & 0xFF);
        memcpy(p, "ICC_PROFILE", 12);
        p += 12;
        *p++ = (unsigned char)(i + 1);
        *p++ = (unsigned char)count;
        memcpy(p, (const unsigned char *)icc + i * chunk, n);
        p += n;
    }
    memcpy(p, old + 2, *length - 2);
    p += *length - 2;
    g_free(*buffer);
    *buffer = out;
    *length = (size_t)(p - out);
    return 0;
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// libvips 8.14's WebP saver writes an EXIF chunk (the resolution, made afresh) and the extended
// header it needs even when told to strip: about 200 bytes on every answer. A stripped WebP
// keeps its picture chunks (and an ICC profile kept on request) and loses EXIF and XMP; the
// extended header goes too when nothing else needs it, which is the simple format libwebp
// writes for a plain picture. A buffer that does not parse as RIFF chunks is left alone.
static void webp_without_metadata(unsigned char *d, size_t *length) {
    size_t n = *length;
    if (n < 12 || memcmp(d, "RIFF", 4) || memcmp(d + 8, "WEBP", 4) || le32(d + 4) != n - 8) return;
    for (size_t at = 12; at < n;) {
        if (n - at < 8) return;
        size_t size = le32(d + at + 4), total = 8 + size + (size & 1);
        if (total > n - at) return;
        at += total;
    }
    size_t out = 12, vp8x = 0, pictures = 0, others = 0;
    int has_vp8x = 0;
    for (size_t at = 12; at < n;) {
        size_t size = le32(d + at + 4), total = 8 + size + (size & 1);
        if (memcmp(d + at, "EXIF", 4) && memcmp(d + at, "XMP ", 4)) {
            if (!memcmp(d + at, "VP8X", 4) && size == 10) {
                has_vp8x = 1;
                vp8x = out;
            } else if (!memcmp(d + at, "VP8 ", 4) || !memcmp(d + at, "VP8L", 4)) {
                pictures++;
            } else {
                others++;
            }
            memmove(d + out, d + at, total);
            out += total;
        }
        at += total;
    }
    if (has_vp8x) {
        d[vp8x + 8] &= (unsigned char)~(0x08 | 0x04);  // the EXIF and XMP flags
        // Without ICC (0x20), alpha (0x10) or animation (0x02) and with one picture chunk, the
        // extended header says nothing.
        if ((d[vp8x + 8] & (0x20 | 0x10 | 0x02)) == 0 && pictures == 1 && others == 0) {
            memmove(d + vp8x, d + vp8x + 18, out - vp8x - 18);
            out -= 18;
        }
    }
    uint32_t riff = (uint32_t)(out - 8);
    d[4] = riff & 0xFF;
    d[5] = (riff >> 8) & 0xFF;
    d[6] = (riff >> 16) & 0xFF;
    d[7] = (riff >> 24) & 0xFF;
    *length = out;
}

int ph_vips_save(VipsImage *in, ph_format format, const ph_save_options *options, const ph_gif_palette *gif_palettes,
                 int gif_palette_count, void **buffer, size_t *length,
                 ph_save_failure *failure) {
    watch_state state = {0, attached_kill, {0}};
    *failure = PH_SAVE_OK;
    int strip = options->strip;
    int icc_after = format == PH_FORMAT_JPEG && strip && options->keep_icc && vips_image_get_typeof(in, VIPS_META_ICC_NAME);
    VipsImage *source = in;
    g_object_ref(source);
    // Stripping removes the fields themselves too: libvips 8.14's WebP saver writes the EXIF
    // block (GPS included) even when told to strip.
    if (strip) {
        VipsImage *copy;
        if (vips_copy(in, &copy, NULL)) {
            g_object_unref(source);
            *failure = PH_SAVE_FAILED_SAVER;
            return -1;
        }
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        vips_image_map(copy, collect_metadata, names);
        for (guint i = 0; i < names->len; i++) vips_image_remove(copy, g_ptr_array_index(names, i));
        g_ptr_array_free(names, TRUE);
        if (!options->keep_icc) vips_image_remove(copy, VIPS_META_ICC_NAME);
        g_object_unref(source);
        source = copy;
        if (!icc_after && options->keep_icc && vips_image_get_typeof(in, VIPS_META_ICC_NAME)) strip = 0;
    }
    VipsImage *through = watched(source, VIPS_DEMAND_STYLE_THINSTRIP, &state);
    if (!through) {
        g_object_unref(source);
        *failure = PH_SAVE_FAILED_SAVER;
        return -1;
    }
    // The saver runs its worker threads to the end before it returns, so `state` (on this
    // stack) outlives every use of it.
    int result = save_as(through, format, options, gif_palettes, gif_palette_count, strip, buffer, length);
    watch_done(&state);
    if (result == 0 && format == PH_FORMAT_WEBP && options->strip) webp_without_metadata(*buffer, length);
    g_object_unref(through);
    if (result == 0 && icc_after && jpeg_with_icc(buffer, length, source)) {
        g_free(*buffer);
        *buffer = NULL;
        result = -1;
    }
    g_object_unref(source);
    if (result) *failure = g_atomic_int_get(&state.failed) ? PH_SAVE_FAILED_INPUT : PH_SAVE_FAILED_SAVER;
    return result;
}

int ph_vips_first_frame(VipsImage *in, VipsImage **out) {
    VipsImage *frame;
    if (vips_extract_area(in, &frame, 0, 0, in->Xsize, vips_image_get_page_height(in), NULL)) return -1;
    int result = vips_copy(frame, out, NULL);
    g_object_unref(frame);
    if (result) return -1;
    static const char *const timing[] = {VIPS_META_PAGE_HEIGHT, VIPS_META_N_PAGES, "delay", "loop", "gif-delay",
                                         "gif-loop"};
    for (size_t i = 0; i < G_N_ELEMENTS(timing); i++) vips_image_remove(*out, timing[i]);
    return 0;
}

int ph_vips_can_save(ph_format format) {
    static const char *const savers[] = {"jpegsave_buffer", "pngsave_buffer", "webpsave_buffer",
                                         "heifsave_buffer", "gifsave_buffer", "jxlsave_buffer"};
    if ((int)format < 0 || (int)format > 5) return 0;
    if (format == PH_FORMAT_AVIF || format == PH_FORMAT_JXL) ph_vips_open_modules();
    return vips_type_find("VipsOperation", savers[format]) != 0;
}
