// GIF written with its frames quantized side by side.
//
// libvips 8.14's GIF saver quantizes and dithers each frame with libimagequant, one after the
// other, in its write thread: on 120 frames of 200 px that is four fifths of the CPU of a
// resize from 480 px, and one core of two stays idle (BENCHMARKS.md, "Animations"). Here each
// batch of frames (one per libvips thread, at most one per palette chain) is quantized and
// remapped on threads of its own, then written in order through giflib.
//
// Everything else is libvips 8.14's saver, kept so the files are the same kind: alpha cut at
// 128, at most 255 colours and libimagequant's speed from the effort (11 - effort), dithering
// at 1.0, the first frame's palette as the global table, a pixel equal to the previous frame's
// written as transparent, the delays and the loop count from the metadata. The differences:
// - each later frame has a local table, where libvips may reuse the global or the previous one
//   (a few hundred bytes a frame), but in a screen recording, whose frames share one table made
//   from all of them where it draws them within 40 dB (plan_recording);
// - a frame's palette is made from the pixels that changed from the frame before, where
//   libvips quantizes the whole frame and then writes most of it as transparent;
// - a frame of at most 255 colours keeps exactly those, and a GIF's frame its source's palette
//   where that is close (quantize_pixels);
// - a frame that the palette made four frames before still fits (a quarter more error at most)
//   is remapped to it, not quantized afresh (palette_chain), where libvips quantizes every frame;
// - a changed pixel is written as transparent too where the colour on screen is as close as
//   its palette's (mark_unchanged);
// - a recording's frames, in memory already, are read on the writer's thread (take_frames), each
//   only inside the box that changed while they are the resize's own frames, and its small
//   batches quantized there (batch_is_small), without libvips' or our threads' hand-offs;
// - frames go through giflib, each cut to the box of what changed, which is known here (hold):
//   libvips' writer, cgif, finds that box by comparing every pixel with the frame before's, a
//   fifth of the CPU of a screen recording. Disposal as cgif does it (held_frame).
// PIPELINEHOST_GIF_THREADS=0 writes through libvips' saver.
#include "ph_internal.h"
#include "ph_vips.h"

#include <gif_lib.h>
#include <libimagequant.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

static atomic_int switch_cache = -1;

// One frame's quantized answer.
typedef struct {
    VipsPel palette[256 * 3];
    int colours;
    int transparent; // the palette entry that is transparent
    int failed;
    int global;       // drawn with the file's global table (palette above is a copy), no local one
    VipsRect changed; // the box outside which the frame is the frame before's (changed_box)
    VipsRect search;  // where changed_box looks: the whole frame, or the box a recording's frame
                      // changed in, where the frame was read from the recording (take_frames)
} quantized;

// The frame last given, written when the next one says how it is disposed of: before a frame
// with holes (a pixel that turns transparent over an opaque one), whole and cleared to the
// background, as cgif, libvips' GIF writer, does; otherwise only its window.
typedef struct {
    int held;
    int whole;       // frame 0, or a frame with holes: written whole
    VipsRect window; // the box outside which every index is the transparent one ("unchanged")
    VipsPel *pixels; // the window's indices, row by row (a frame's worth of room)
    VipsPel palette[256 * 3];
    int colours, local, transparent, delay;
} held_frame;

// A chain of frames (every CHAINS-th) with its libimagequant settings and last palette. Its
// next frame is remapped to that palette first, and keeps it when the error is at most `limit`:
// the frames of a pan share their colours, and a remap alone costs about half of a quantization
// and a remap (libimagequant at effort 1, 120 frames of 200 px).
typedef struct {
    liq_attr *attr;
    liq_result *result;   // the chain's last fresh quantization, or NULL
    double fresh_error;   // that quantization's own error
    double limit;         // REUSE_ERROR_RATIO times it
    double sampled_limit; // and times its sampled_error
    int wait, backoff;    // frames to quantize afresh before the next try, and the next wait
} palette_chain;

// A reused palette's error may be this many times its own frame's: 1 dB of PSNR at most.
#define REUSE_ERROR_RATIO 1.25

// Frame k follows frame k - CHAINS in its chain, whatever the threads: the file is the same on
// any machine, and the chains are quantized side by side (so up to CHAINS workers at once).
#define CHAINS 4

typedef struct {
    int width, frame_height, frames, batch;
    int speed;
    VipsPel *rgba;     // `batch` frames of RGBA, as they arrive
    VipsPel *index;    // `batch` frames of palette indices
    quantized *answer; // `batch` answers
    VipsPel *previous; // the last frame written, RGBA, for the transparency optimisation
    VipsPel *shown;    // what a viewer shows after it, RGB and whether opaque, 4 bytes a pixel
    int filled_rows;   // rows received so far
    int written;       // frames written so far
    int *delays, n_delays, loop;
    const ph_gif_palette *palettes; // the source's, frame by frame
    int palette_count;
    double first_error; // frame 0's error where it was quantized afresh, else 0
    quantized global;   // frame 0's table, the file's global one, once frame 0 is written
    ph_gif_nearest global_nearest; // and made ready for lookups, in a recording
    liq_attr *recording_attr; // a recording's table from all its frames (plan_recording), or NULL
    liq_result *recording;
    const ph_frame_changes *changes; // the boxes ph_copy_changed_frames recorded, or NULL
    int trusted; // every frame so far was read from the recorded frames (take_frames)
    GifFileType *gif;
    held_frame held;
    VipsPel *whole; // a frame's indices, for held_frame's whole frame
    GByteArray *out;
    palette_chain chains[CHAINS];
    ph_handover handover; // this writer lives on the caller's stack
} gif_writer;

typedef struct {
    gif_writer *writer;
    int first, step, count;
} worker_share;

static size_t frame_pixels(const gif_writer *w) { return (size_t)w->width * w->frame_height; }

// Grows `box` (empty where it has no width) to take in row `y`'s pixels `first` to `last`: the
// box of what changed, found a row at a time by changed_box and hold. Nothing where `first` < 0.
static void take_in_row(VipsRect *box, int y, int first, int last) {
    if (first < 0) return;
    VipsRect row = {first, y, last - first + 1, 1};
    vips_rect_unionrect(box, &row, box);
}

// A pixel the frame before shows too (cgifsave's set_transparent at its default maxerror of 0):
// it is written as transparent, "unchanged".
static int unchanged(const VipsPel *old, const VipsPel *now) {
    return old[3] == now[3] && (!now[3] || (old[0] == now[0] && old[1] == now[1] && old[2] == now[2]));
}

// The box around the pixels of slot `slot` that differ from the frame before (an empty box when
// none do), or the whole frame: for the first frame, and for one where a pixel turns transparent
// over an opaque one, which write_slot writes whole. The frame before is the one last written
// (`previous`) or the slot before, both cut at alpha 128 as they arrived. Only the slot's
// `search` box is looked at: outside it, the frame is the frame before's.
static VipsRect changed_box(const gif_writer *w, int slot) {
    VipsRect whole = {0, 0, w->width, w->frame_height};
    if (!w->previous || w->written + slot == 0) return whole;
    size_t n = frame_pixels(w);
    const VipsRect *search = &w->answer[slot].search;
    size_t line = (size_t)w->width * 4, start = (size_t)search->top * line + (size_t)search->left * 4;
    const VipsPel *old = (slot == 0 ? w->previous : w->rgba + (size_t)(slot - 1) * n * 4) + start;
    const VipsPel *now = w->rgba + (size_t)slot * n * 4 + start;
    VipsRect box = {0, 0, 0, 0};
    for (int y = search->top; y < VIPS_RECT_BOTTOM(search); y++, old += line, now += line) {
        // Both frames are cut at alpha 128 (a transparent pixel all zeros), so a pixel is
        // unchanged exactly where its four bytes are: a row that compares equal is skipped
        // whole, as most of a recording's rows are.
        if (!memcmp(old, now, (size_t)search->width * 4)) continue;
        int first = -1, last = -1;
        for (int x = search->left; x < VIPS_RECT_RIGHT(search); x++) {
            const VipsPel *a = old + (x - search->left) * 4, *b = now + (x - search->left) * 4;
            if (!b[3] && a[3]) return whole;
            if (unchanged(a, b)) continue;
            if (first < 0) first = x;
            last = x;
        }
        take_in_row(&box, y, first, last);
    }
    return box;
}

// Sets `q`'s table to libimagequant's `palette`, with a transparent entry.
static void take_palette(const liq_palette *palette, quantized *q) {
    q->colours = (int)palette->count;
    for (unsigned i = 0; i < palette->count; i++) {
        q->palette[i * 3] = palette->entries[i].r;
        q->palette[i * 3 + 1] = palette->entries[i].g;
        q->palette[i * 3 + 2] = palette->entries[i].b;
    }
    // libimagequant puts a transparent entry first. Without one, a spare entry (there are at
    // most 255 colours) is the transparent one: it marks the pixels unchanged from the frame
    // before, and an index past the table would not decode.
    if (palette->count > 0 && palette->entries[0].a == 0) {
        q->transparent = 0;
    } else {
        q->transparent = q->colours++;
        memset(q->palette + q->transparent * 3, 0, 3);
    }
}

// Remaps `image` (the `count` RGBA pixels at `rgba`) to `result`'s palette into `index` and `q`,
// and sets `*error` to the mean squared error per channel of its opaque pixels: 0 on failure.
static int remap(liq_result *result, liq_image *image, const VipsPel *rgba, size_t count, VipsPel *index,
                 quantized *q, double *error) {
    if (liq_write_remapped_image(result, image, index, count) != LIQ_OK) return 0;
    take_palette(liq_get_palette(result), q);
    double sum = 0;
    size_t opaque = 0;
    for (size_t i = 0; i < count; i++, rgba += 4) {
        if (!rgba[3]) continue;
        const VipsPel *c = q->palette + index[i] * 3;
        sum += (rgba[0] - c[0]) * (rgba[0] - c[0]) + (rgba[1] - c[1]) * (rgba[1] - c[1]) +
               (rgba[2] - c[2]) * (rgba[2] - c[2]);
        opaque++;
    }
    *error = opaque ? sum / (3.0 * (double)opaque) : 0;
    q->failed = 0;
    return 1;
}

// The mean squared error per channel of about 256 of the opaque pixels at `rgba` at their
// nearest entry of `palette`, undithered: a cheap measure of how well a palette fits, compared
// with the same measure on the frame the palette was made for before a frame is remapped to it.
static double sampled_error(const liq_palette *palette, const VipsPel *rgba, size_t count) {
    size_t step = VIPS_MAX(1, count / 256);
    double sum = 0;
    size_t sampled = 0;
    for (size_t i = 0; i < count; i += step) {
        const VipsPel *p = rgba + i * 4;
        if (!p[3]) continue;
        int best = INT_MAX;
        for (unsigned e = 0; e < palette->count; e++) {
            const liq_color *c = &palette->entries[e];
            if (!c->a) continue;
            int d = (p[0] - c->r) * (p[0] - c->r) + (p[1] - c->g) * (p[1] - c->g) + (p[2] - c->b) * (p[2] - c->b);
            best = VIPS_MIN(best, d);
        }
        if (best == INT_MAX) continue;
        sum += best;
        sampled++;
    }
    return sampled ? sum / (3.0 * (double)sampled) : 0;
}

// Whether the chain's palette may take these pixels: a transparent pixel needs a transparent
// entry, or libimagequant would give it the nearest colour; and the sampled error must be within
// the limit, so that a frame the palette does not fit (most of a photo pan from Pillow, most of
// a recording's typed text) costs a few lookups, not a remap.
static int chain_takes(const palette_chain *chain, const VipsPel *rgba, size_t count) {
    const liq_palette *palette = liq_get_palette(chain->result);
    if (!(palette->count > 0 && palette->entries[0].a == 0))
        for (size_t i = 0; i < count; i++)
            if (!rgba[i * 4 + 3]) return 0;
    return sampled_error(palette, rgba, count) <= chain->sampled_limit;
}

// Frame 0 of a recording (plan_recording): given the recording's table, mapped to it undithered
// where that is within 40 dB, as the later frames are, else dithered by libimagequant.
static int recording_frame(gif_writer *w, const VipsPel *rgba, int width, int height, VipsPel *index, quantized *q) {
    size_t count = (size_t)width * height;
    take_palette(liq_get_palette(w->recording), q);
    q->failed = 0;
    ph_gif_nearest table;
    ph_gif_nearest_prepare(&table, q->palette, q->colours, q->transparent);
    if (ph_gif_map_to_table(&table, q->transparent, rgba, count, PH_GIF_KEEP_ERROR, index)) return 1;
    double error;
    liq_image *image = liq_image_create_rgba(w->recording_attr, rgba, width, height, 0);
    int kept = image && remap(w->recording, image, rgba, count, index, q, &error);
    if (image) liq_image_destroy(image);
    return kept;
}

// In a recording (plan_recording), draws the `width` x `height` RGBA pixels at `rgba` with the
// recording's table, the global one, where that is close enough. Otherwise gives them their own
// colours where they have at most 255 (a dark or smooth frame resized, a few changed
// characters), or maps them to the source frame's palette where that is close enough, or to the
// chain's last palette where that is, or quantizes and remaps them (libvips' cgifsave,
// write_frame's first half), making that palette the chain's.
//
// The source's palette is close enough at 40 dB, or at the error libimagequant's palette and
// dithering had on the chain's last fresh frame (or, before the chain has one, on frame 0)
// where that is more: the frames of a pan from a dithered GIF (ffmpeg's paletteuse,
// ImageMagick's) map to their own palettes at 38 to 43 dB, closer on every frame than
// libimagequant at effort 1 comes (36 to 42 dB), in a fraction of the time.
static void quantize_pixels(gif_writer *w, palette_chain *chain, int frame, const VipsPel *rgba, int width,
                            int height, VipsPel *index, quantized *q) {
    size_t count = (size_t)width * height;
    q->global = 0;
    if (frame == 0 && w->recording && recording_frame(w, rgba, width, height, index, q)) return;
    if (frame > 0 && w->recording && w->global.colours > 0 &&
        ph_gif_map_to_table(&w->global_nearest, w->global.transparent, rgba, count, PH_GIF_KEEP_ERROR, index)) {
        memcpy(q->palette, w->global.palette, sizeof(q->palette));
        q->colours = w->global.colours;
        q->transparent = w->global.transparent;
        q->global = 1;
        q->failed = 0;
        return;
    }
    if (ph_gif_exact_palette(rgba, count, index, q->palette, &q->colours, &q->transparent)) {
        q->failed = 0;
        return;
    }
    if (frame < w->palette_count && w->palettes[frame].colours > 0) {
        double keep = VIPS_MAX(PH_GIF_KEEP_ERROR, chain->result ? chain->fresh_error : w->first_error);
        if (ph_gif_map_to_palette(&w->palettes[frame], rgba, count, keep, index, q->palette, &q->colours,
                                  &q->transparent)) {
            q->failed = 0;
            return;
        }
    }
    q->failed = 1;
    if (!chain->attr) {
        if (!(chain->attr = liq_attr_create())) return;
        liq_set_max_colors(chain->attr, 255);
        liq_set_quality(chain->attr, 0, 100);
        liq_set_speed(chain->attr, w->speed);
    }
    double error;
    if (chain->wait > 0) {
        chain->wait--;
    } else if (chain->result && chain_takes(chain, rgba, count)) {
        liq_image *image = liq_image_create_rgba(chain->attr, rgba, width, height, 0);
        int kept = image && remap(chain->result, image, rgba, count, index, q, &error) && error <= chain->limit;
        if (image) liq_image_destroy(image);
        if (kept) {
            chain->backoff = 0;
            return;
        }
        // A remap wasted: the pictures are not alike enough here (a pan from Pillow, where each
        // frame's palette is its own), so the chain waits 2, 4, 8, then 16 of its frames
        // before it tries again.
        chain->wait = chain->backoff = VIPS_CLIP(2, chain->backoff * 2, 16);
        q->failed = 1;
    }
    liq_image *image = liq_image_create_rgba(chain->attr, rgba, width, height, 0);
    liq_result *result = NULL;
    if (image && liq_image_quantize(image, chain->attr, &result) == LIQ_OK) {
        liq_set_dithering_level(result, 1.0);
        if (remap(result, image, rgba, count, index, q, &error)) {
            if (chain->result) liq_result_destroy(chain->result);
            chain->result = result;
            chain->fresh_error = error;
            // Only where frame 0 is a batch of its own (batch_size): no frame reads it meanwhile.
            if (frame == 0 && w->palette_count > 0) w->first_error = error;
            chain->limit = error * REUSE_ERROR_RATIO;
            chain->sampled_limit = sampled_error(liq_get_palette(result), rgba, count) * REUSE_ERROR_RATIO;
            result = NULL;
        }
    }
    if (result) liq_result_destroy(result);
    if (image) liq_image_destroy(image);
}

// Quantizes slot `slot` of the batch. Only the pixels that changed from the frame before are
// quantized: the rest are written as transparent (mark_unchanged), so in a screen recording,
// where a few characters change a frame, libimagequant sees those few and not the whole screen
// each time, and its palette is spent on them.
static void quantize_slot(gif_writer *w, palette_chain *chain, int slot) {
    size_t n = frame_pixels(w);
    VipsPel *rgba = w->rgba + (size_t)slot * n * 4, *index = w->index + (size_t)slot * n;
    quantized *q = &w->answer[slot];
    int frame = w->written + slot;
    VipsRect box = q->changed = changed_box(w, slot);
    if (vips_rect_isempty(&box)) {
        // Nothing changed: every pixel is the transparent entry, of the global table in a
        // recording (whose frame 0 is written first, alone: batch_size), else of a table of two.
        q->global = w->recording && w->global.colours > 0;
        if (q->global) {
            memcpy(q->palette, w->global.palette, sizeof(q->palette));
            q->colours = w->global.colours;
            q->transparent = w->global.transparent;
        } else {
            memset(q->palette, 0, 6);
            q->colours = 2;
            q->transparent = 0;
        }
        q->failed = 0;
        return;
    }
    size_t pixels = (size_t)box.width * box.height;
    VipsPel *part = pixels < n ? g_try_malloc(pixels * 5) : NULL;
    if (!part) {
        quantize_pixels(w, chain, frame, rgba, w->width, w->frame_height, index, q);
        return;
    }
    VipsPel *part_index = part + pixels * 4;
    for (int y = 0; y < box.height; y++)
        memcpy(part + (size_t)y * box.width * 4, rgba + ((size_t)(box.top + y) * w->width + box.left) * 4,
               (size_t)box.width * 4);
    quantize_pixels(w, chain, frame, part, box.width, box.height, part_index, q);
    for (int y = 0; y < box.height; y++)
        memcpy(index + (size_t)(box.top + y) * w->width + box.left, part_index + (size_t)y * box.width,
               (size_t)box.width);
    g_free(part);
}

static void *quantize_share(void *a) {
    worker_share *share = a;
    gif_writer *w = share->writer;
    for (int slot = 0; slot < share->count; slot++) {
        int chain = (w->written + slot) % CHAINS;
        if (chain % share->step == share->first) quantize_slot(w, &w->chains[chain], slot);
    }
    return NULL;
}

static int write_bytes(GifFileType *gif, const GifByteType *data, int length) {
    g_byte_array_append(gif->UserData, data, (guint)length);
    return length;
}

// `colours` entries of `palette` as a giflib table, padded to a power of two with black.
static ColorMapObject *colour_map(const VipsPel *palette, int colours) {
    int size = 2;
    while (size < colours) size *= 2;
    ColorMapObject *map = GifMakeMapObject(size, NULL);
    if (!map) return NULL;
    for (int i = 0; i < colours; i++)
        map->Colors[i] = (GifColorType){palette[i * 3], palette[i * 3 + 1], palette[i * 3 + 2]};
    return map;
}

// The file's header, with `q`'s table as the global one, and the loop count (none where the
// animation plays once, as cgif does).
static int open_gif(gif_writer *w, const quantized *q) {
    int error = 0;
    if (!(w->gif = EGifOpen(w->out, write_bytes, &error))) return -1;
    EGifSetGifVersion(w->gif, true);
    ColorMapObject *global = colour_map(q->palette, q->colours);
    int result = global ? EGifPutScreenDesc(w->gif, w->width, w->frame_height, 8, 0, global) : GIF_ERROR;
    GifFreeMapObject(global);
    if (result == GIF_OK && w->loop != 1) {
        int loops = w->loop > 1 ? w->loop - 1 : w->loop;
        const GifByteType loop[3] = {1, (GifByteType)(loops & 0xff), (GifByteType)((loops >> 8) & 0xff)};
        result = EGifPutExtensionLeader(w->gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
                         EGifPutExtensionBlock(w->gif, 11, "NETSCAPE2.0") == GIF_OK &&
                         EGifPutExtensionBlock(w->gif, 3, loop) == GIF_OK && EGifPutExtensionTrailer(w->gif) == GIF_OK
                     ? GIF_OK
                     : GIF_ERROR;
    }
    return result == GIF_OK ? 0 : -1;
}

// Writes the held frame: whole and disposed of to the background where the next frame has holes
// (`before_holes`), else its window, left in place.
static int put_held(gif_writer *w, int before_holes) {
    held_frame *h = &w->held;
    VipsRect box = h->window;
    VipsPel *pixels = h->pixels;
    if (before_holes && !h->whole) {
        box = (VipsRect){0, 0, w->width, w->frame_height};
        memset(w->whole, h->transparent, frame_pixels(w));
        for (int y = 0; y < h->window.height; y++)
            memcpy(w->whole + (size_t)(h->window.top + y) * w->width + h->window.left,
                   h->pixels + (size_t)y * h->window.width, (size_t)h->window.width);
        pixels = w->whole;
    }
    GraphicsControlBlock control = {before_holes ? DISPOSE_BACKGROUND : DISPOSE_DO_NOT, false, h->delay,
                                    h->transparent};
    GifByteType extension[4];
    size_t length = EGifGCBToExtension(&control, extension);
    ColorMapObject *map = h->local ? colour_map(h->palette, h->colours) : NULL;
    int result = (!h->local || map) &&
                         EGifPutExtension(w->gif, GRAPHICS_EXT_FUNC_CODE, (int)length, extension) == GIF_OK &&
                         EGifPutImageDesc(w->gif, box.left, box.top, box.width, box.height, false, map) == GIF_OK &&
                         EGifPutLine(w->gif, pixels, box.width * box.height) == GIF_OK
                     ? 0
                     : -1;
    GifFreeMapObject(map);
    h->held = 0;
    return result;
}

// Holds `index`, drawn with `q`'s table, as the next frame: whole, or the box of `changed` that
// holds every index other than the transparent one (1 x 1 where there is none, as cgif writes
// it). Outside `changed`, `index` is not read: every pixel there is the transparent one.
static void hold(gif_writer *w, const quantized *q, const VipsPel *index, int whole, int local, int delay) {
    held_frame *h = &w->held;
    VipsRect box = {0, 0, w->width, w->frame_height};
    int none = 0;
    if (!whole) {
        box = (VipsRect){0, 0, 0, 0};
        for (int y = q->changed.top; y < VIPS_RECT_BOTTOM(&q->changed); y++) {
            const VipsPel *row = index + (size_t)y * w->width;
            int first = -1, last = -1;
            for (int x = q->changed.left; x < VIPS_RECT_RIGHT(&q->changed); x++) {
                if (row[x] == q->transparent) continue;
                if (first < 0) first = x;
                last = x;
            }
            take_in_row(&box, y, first, last);
        }
        none = vips_rect_isempty(&box);
        if (none) box = (VipsRect){0, 0, 1, 1};
    }
    if (none) h->pixels[0] = (VipsPel)q->transparent;
    for (int y = 0; y < box.height && !none; y++)
        memcpy(h->pixels + (size_t)y * box.width, index + (size_t)(box.top + y) * w->width + box.left,
               (size_t)box.width);
    memcpy(h->palette, q->palette, sizeof(h->palette));
    h->colours = q->colours;
    h->local = local;
    h->transparent = q->transparent;
    h->delay = delay;
    h->whole = whole;
    h->window = box;
    h->held = 1;
}

static int distance(const VipsPel *a, const VipsPel *b) {
    return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}

// mark_unchanged for `count` pixels of a row.
static void mark_row(VipsPel *old, const VipsPel *now, VipsPel *shown, VipsPel *index, int count, const VipsPel *palette,
                     int trans) {
    for (int i = 0; i < count; i++, old += 4, now += 4, shown += 4) {
        if (unchanged(old, now)) {
            index[i] = (VipsPel)trans;
            continue;
        }
        memcpy(old, now, 4);
        const VipsPel *given = palette + index[i] * 3;
        if (shown[3] && now[3] && distance(shown, now) <= distance(given, now)) {
            index[i] = (VipsPel)trans;
            continue;
        }
        memcpy(shown, given, 3);
        shown[3] = now[3];
    }
}

// Marks pixels equal to the last written frame's as transparent (cgifsave's set_transparent at
// its default maxerror of 0), and also pixels whose colour on screen from the frames before is
// at least as close to theirs as the colour this frame's palette gives them (gifsicle's
// resize does the same): the union of the frames' palettes draws the picture, not one table.
// Keeps `previous` and `shown` up to date. Outside `changed` every pixel is the frame before's,
// so transparent, and left as it is in `index`: hold reads only inside `changed`.
static void mark_unchanged(gif_writer *w, const VipsPel *now, VipsPel *index, const VipsPel *palette, int trans,
                           const VipsRect *changed) {
    for (int y = changed->top; y < VIPS_RECT_BOTTOM(changed); y++) {
        size_t start = (size_t)y * w->width + changed->left;
        mark_row(w->previous + start * 4, now + start * 4, w->shown + start * 4, index + start, changed->width,
                 palette, trans);
    }
}

// Sets `shown` to the frame at `index`, written whole.
static void show_whole(gif_writer *w, const VipsPel *index, const VipsPel *palette, int trans) {
    size_t n = frame_pixels(w);
    for (size_t i = 0; i < n; i++) {
        memcpy(w->shown + i * 4, palette + index[i] * 3, 3);
        w->shown[i * 4 + 3] = index[i] == trans ? 0 : 255;
    }
}

// Writes slot `slot` as the next frame (cgifsave's write_frame, second half), once the frame
// after it is known (put_held).
static int write_slot(gif_writer *w, int slot) {
    size_t n = frame_pixels(w);
    quantized *q = &w->answer[slot];
    VipsPel *rgba = w->rgba + (size_t)slot * n * 4;
    VipsPel *index = w->index + (size_t)slot * n;
    if (!w->gif) {
        if (open_gif(w, q)) return -1;
        if (w->frames > 1) w->global = *q;
        if (w->recording) ph_gif_nearest_prepare(&w->global_nearest, q->palette, q->colours, q->transparent);
    }
    // Every frame has a transparent index, as in libvips' saver: when a later frame opens a
    // hole, the frame before is disposed of to the background (put_held), and a decoder clears a
    // frame with a transparent index to transparent, but paints one without it in the background
    // colour, which would show through the hole. A pixel that turns transparent here over an
    // opaque one before cannot use the transparency index for "unchanged" as well: such a frame
    // has holes, and is written whole. changed_box makes the box the whole frame where there is
    // one, so a smaller box has none.
    int holes = 0;
    if (w->written > 0 && q->changed.width == w->width && q->changed.height == w->frame_height)
        for (size_t i = 0; i < n && !holes; i++) holes = !rgba[i * 4 + 3] && w->previous[i * 4 + 3];
    int whole = w->written == 0 || holes;
    if (!whole) {
        mark_unchanged(w, rgba, index, q->palette, q->transparent, &q->changed);
    } else if (w->previous) {
        memcpy(w->previous, rgba, n * 4);
        show_whole(w, index, q->palette, q->transparent);
    }
    int delay = 0;
    if (w->delays && w->written < w->n_delays) delay = VIPS_CLIP(0, VIPS_RINT(w->delays[w->written] / 10.0), 65535);
    if (w->held.held && put_held(w, holes)) return -1;
    hold(w, q, index, whole, w->written > 0 && !q->global, delay);
    w->written++;
    return 0;
}

// Pixels a batch's changed boxes may hold and still be quantized on the writer's own thread: a
// thread started and joined for each batch cost more than a few characters of a recording take.
#define INLINE_PIXELS 16384

// Whether the batch's frames, by the boxes ph_copy_changed_frames recorded, changed in so few
// pixels that starting threads for them costs more than it saves.
static int batch_is_small(const gif_writer *w, int count) {
    if (!w->changes) return 0;
    size_t pixels = 0;
    for (int slot = 0; slot < count; slot++) {
        const VipsRect *box = &w->changes->boxes[w->written + slot];
        pixels += (size_t)box->width * box->height;
    }
    return pixels <= INLINE_PIXELS;
}

// Quantizes the `count` frames waiting in the batch side by side, then writes them in order.
static int flush_batch(gif_writer *w, int count) {
    int threads = batch_is_small(w, count) ? 1 : VIPS_MIN(count, CHAINS); // count <= w->batch <= CHAINS
    pthread_t ids[CHAINS];
    worker_share shares[CHAINS];
    int started = 0;
    for (int t = 0; t < threads; t++) shares[t] = (worker_share){w, t, threads, count};
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, quantize_share, &shares[t])) break;
        started = t;
    }
    // Slots whose thread did not start are done here.
    for (int t = started + 1; t < threads; t++) quantize_share(&shares[t]);
    quantize_share(&shares[0]);
    for (int t = 1; t <= started; t++) pthread_join(ids[t], NULL);
    for (int slot = 0; slot < count; slot++) {
        if (w->answer[slot].failed) {
            vips_error("ph_gif_save", "quantisation failed");
            return -1;
        }
        if (write_slot(w, slot)) {
            vips_error("ph_gif_save", "giflib failed to write a frame: %s", GifErrorString(w->gif ? w->gif->Error : 0));
            return -1;
        }
    }
    return 0;
}

// Frames in the batch being filled. Where the source's palettes may be kept, frame 0 is a
// batch of its own, so that its error (first_error) is known to every chain's first frame:
// without it, each of the CHAINS first frames would be quantized to learn it. So it is in a
// recording, whose later frames map to frame 0's table, the global one (plan_recording).
static int batch_size(const gif_writer *w) {
    return w->written == 0 && (w->palette_count > 0 || w->recording) ? 1 : w->batch;
}

// Copies `count` pixels of `bands` (3, or 4 with alpha) to `out` as RGBA: an RGB pixel opaque,
// and alpha cut at 128, as cgifsave does, with a transparent pixel all zeros, which helps the
// quantizer make a better palette and makes transparent pixels compare equal. (libvips'
// bandjoin_const adds an alpha a byte at a time: a tenth of a recording's CPU.)
static void take_pixels(const VipsPel *p, int count, int bands, VipsPel *out) {
    if (bands == 3) {
        for (int x = 0; x < count; x++, p += 3, out += 4) out[0] = p[0], out[1] = p[1], out[2] = p[2], out[3] = 255;
        return;
    }
    for (int x = 0; x < count; x++, p += 4, out += 4) {
        if (p[3] >= 128)
            out[0] = p[0], out[1] = p[1], out[2] = p[2], out[3] = 255;
        else
            out[0] = out[1] = out[2] = out[3] = 0;
    }
}

static int take_frame_rows(gif_writer *w, VipsRegion *region, VipsRect *area) {
    size_t line = (size_t)w->width * 4;
    for (int y = 0; y < area->height; y++) {
        int row = w->filled_rows;
        int frame = row / w->frame_height, in_frame = row % w->frame_height;
        int slot = frame - w->written;
        VipsPel *p = w->rgba + ((size_t)slot * w->frame_height + in_frame) * line;
        take_pixels(VIPS_REGION_ADDR(region, 0, area->top + y), w->width, region->im->Bands, p);
        if (in_frame == 0) w->answer[slot].search = (VipsRect){0, 0, w->width, w->frame_height};
        w->filled_rows++;
        if (in_frame == w->frame_height - 1 && (slot == batch_size(w) - 1 || frame == w->frames - 1))
            if (flush_batch(w, slot + 1)) return -1;
    }
    return 0;
}

// Takes frame `k`, which outside `changed` is the frame before: that is copied (from the slot
// before, or `previous`, the frame last written), and only `changed`, prepared in `region`, is
// converted.
static int take_changed_frame(gif_writer *w, VipsRegion *region, int k, const VipsRect *changed) {
    size_t n = frame_pixels(w);
    int slot = k - w->written;
    VipsPel *frame = w->rgba + (size_t)slot * n * 4;
    memcpy(frame, slot > 0 ? frame - n * 4 : w->previous, n * 4);
    for (int y = changed->top; y < VIPS_RECT_BOTTOM(changed); y++)
        take_pixels(VIPS_REGION_ADDR(region, changed->left, k * w->frame_height + y), changed->width,
                    region->im->Bands, frame + ((size_t)y * w->width + changed->left) * 4);
    w->answer[slot].search = *changed;
    w->filled_rows += w->frame_height;
    return slot == batch_size(w) - 1 || k == w->frames - 1 ? flush_batch(w, slot + 1) : 0;
}

// Whether `region`, prepared on `area` of the writer's image, holds the pixels
// ph_copy_changed_frames made, where it made them: `ready` is those frames, through copies and
// casts that change nothing, and not a later stage's (a flip, a blur) that kept the field.
static int reads_recorded(const gif_writer *w, VipsRegion *region, const VipsRect *area) {
    return VIPS_REGION_LSKIP(region) == w->changes->line &&
           VIPS_REGION_ADDR(region, area->left, area->top) ==
               w->changes->pixels + (size_t)area->top * w->changes->line +
                   (size_t)area->left * VIPS_IMAGE_SIZEOF_PEL(region->im);
}

// A recording's frames, as ph_copy_changed_frames made them, are in memory: read a frame at a
// time on this thread. vips_sink_disc hands every strip of rows from its workers to its writer
// (a semaphore each way), which in a 120-frame recording cost more CPU than the pixels did. A
// stage after the resize (a flip, a blur) is computed here too, on this one thread.
// Where frame 0 is read from the recorded frames themselves, so untouched by any later stage,
// each later frame is read only inside its recorded box (the rest is the frame before's), for
// as long as that box is read from them too; after the first that is not, frames are read whole.
static int take_frames(gif_writer *w, VipsImage *ready) {
    VipsRegion *region = vips_region_new(ready);
    int result = region ? 0 : -1;
    VipsRect whole = {0, 0, w->width, w->frame_height};
    for (int k = 0; k < w->frames && !result; k++) {
        if (ph_attached_kill_is_set()) {
            vips_error("ph_gif_save", "cancelled");
            result = -1;
            break;
        }
        if (k > 0 && w->trusted) {
            VipsRect changed, area;
            vips_rect_intersectrect(&w->changes->boxes[k], &whole, &changed);
            area = (VipsRect){changed.left, k * w->frame_height + changed.top, changed.width, changed.height};
            if (!vips_rect_isempty(&changed) && vips_region_prepare(region, &area)) {
                result = -1;
                break;
            }
            if (vips_rect_isempty(&changed) || reads_recorded(w, region, &area)) {
                result = take_changed_frame(w, region, k, &changed);
                continue;
            }
            w->trusted = 0;
        }
        VipsRect area = {0, k * w->frame_height, w->width, w->frame_height};
        if (vips_region_prepare(region, &area)) {
            result = -1;
            break;
        }
        if (k == 0) w->trusted = reads_recorded(w, region, &area);
        result = take_frame_rows(w, region, &area);
    }
    if (region) g_object_unref(region);
    return result;
}

static int take_rows(VipsRegion *region, VipsRect *area, void *a) {
    gif_writer *w = a;
    ph_handover_enter(&w->handover);
    int result = take_frame_rows(w, region, area);
    ph_handover_leave(&w->handover);
    return result;
}


// A screen recording's frames change in few pixels (typed text, a cursor). Written with a table
// a frame (up to 768 bytes each), the tables were three quarters of such a file, four to thirteen
// times gifsicle's; and frame 0, whose table is the global one, holds few of the colours later
// frames bring. So where the frames after the first change in at most a RECORDING_SHARE of their
// pixels, one table is made from frame 0 and every changed box (libimagequant's histogram over
// them). It is frame 0's table, so the global one, and frame 0 and each later frame are drawn
// with it, undithered, where that is within 40 dB (recording_frame, quantize_pixels); frame 0 is
// dithered with it otherwise, and a later frame takes a table of its own. Only frames that
// ph_copy_changed_frames made, and that still have its size, are looked at, from the boxes it
// recorded: a recording's frames are in memory, and those boxes are all the table needs to read.
#define RECORDING_SHARE 4 // a quarter

// The boxes of `in`'s frames that changed from the frame before, as ph_copy_changed_frames
// recorded them, where they are `w`'s frames still; NULL otherwise.
static const ph_frame_changes *recorded_changes(const gif_writer *w, VipsImage *in) {
    const void *blob;
    size_t size;
    if (!vips_image_get_typeof(in, PH_FRAME_CHANGES_FIELD) ||
        vips_image_get_blob(in, PH_FRAME_CHANGES_FIELD, &blob, &size))
        return NULL;
    const ph_frame_changes *changes = blob;
    if (size < sizeof(*changes) || changes->width != w->width || changes->page_height != w->frame_height ||
        changes->frames != w->frames || size != sizeof(*changes) + sizeof(VipsRect) * (size_t)w->frames)
        return NULL;
    return changes;
}

// Makes the recording's table (w->recording) from the boxes of `ready` that `changes` says
// changed, where they are a recording's; leaves it NULL otherwise. A box that a later stage
// changed further (a flip) only makes the table fit worse: each frame is still mapped to it only
// where that is within 40 dB.
static void plan_recording(gif_writer *w, VipsImage *ready, const ph_frame_changes *changes) {
    size_t n = frame_pixels(w), changed = 0;
    for (int k = 1; k < w->frames; k++) changed += (size_t)changes->boxes[k].width * changes->boxes[k].height;
    if (changed * RECORDING_SHARE > n * (size_t)(w->frames - 1)) return;
    VipsPel *cut = g_try_malloc(n * 4);
    VipsRegion *region = vips_region_new(ready);
    liq_histogram *histogram = NULL;
    if (!cut) goto done;
    if (!(w->recording_attr = liq_attr_create())) goto done;
    liq_set_max_colors(w->recording_attr, 255);
    liq_set_quality(w->recording_attr, 0, 100);
    liq_set_speed(w->recording_attr, w->speed);
    if (!(histogram = liq_histogram_create(w->recording_attr))) goto done;
    for (int k = 0; k < w->frames; k++) {
        VipsRect box = changes->boxes[k], whole = {0, 0, w->width, w->frame_height};
        vips_rect_intersectrect(&box, &whole, &box);
        if (vips_rect_isempty(&box)) continue;
        VipsRect area = {box.left, k * w->frame_height + box.top, box.width, box.height};
        if (vips_region_prepare(region, &area)) goto done;
        for (int y = 0; y < box.height; y++)
            take_pixels(VIPS_REGION_ADDR(region, box.left, area.top + y), box.width, ready->Bands,
                        cut + (size_t)y * box.width * 4);
        liq_image *image = liq_image_create_rgba(w->recording_attr, cut, box.width, box.height, 0);
        liq_error added = image ? liq_histogram_add_image(histogram, w->recording_attr, image) : LIQ_OUT_OF_MEMORY;
        if (image) liq_image_destroy(image);
        if (added != LIQ_OK) goto done;
    }
    if (liq_histogram_quantize(histogram, w->recording_attr, &w->recording) != LIQ_OK) w->recording = NULL;
    else liq_set_dithering_level(w->recording, 1.0);
done:
    if (histogram) liq_histogram_destroy(histogram);
    if (region) g_object_unref(region);
    g_free(cut);
}

int ph_gif_threads(void) {
    return ph_switched_off("PIPELINEHOST_GIF_THREADS", &switch_cache) ? 0 : VIPS_CLIP(1, vips_concurrency_get(), 64);
}

int ph_gif_save_buffer(VipsImage *in, int strip, int effort, int threads, const ph_gif_palette *palettes,
                       int palette_count, void **buffer, size_t *length) {
    if (threads <= 0) return vips_gifsave_buffer(in, buffer, length, "strip", strip, "effort", effort, NULL);
    int frame_height = vips_image_get_page_height(in);
    if (in->Xsize > 65535 || frame_height > 65535) {
        vips_error("ph_gif_save", "frames of %dx%d are over GIF's 65535", in->Xsize, frame_height);
        return -1;
    }
    // 8-bit sRGB, with or without alpha: take_pixels makes RGBA, cgifsave's "ready" image.
    VipsImage *ready;
    if (ph_to_srgb8(in, "ph_gif_save", &ready)) return -1;
    gif_writer w = {0};
    w.width = ready->Xsize;
    w.frame_height = frame_height;
    w.frames = ready->Ysize / frame_height;
    // No more slots than frames (a large still holds one frame, as libvips' saver does), nor than
    // chains: flush_batch runs at most one worker a chain, so more slots would only hold memory.
    w.batch = VIPS_MIN(VIPS_MIN(threads, CHAINS), w.frames);
    w.speed = VIPS_CLIP(1, 11 - effort, 10);
    w.loop = 0;
    w.palettes = palettes;
    w.palette_count = palettes ? palette_count : 0;
    if (vips_image_get_typeof(ready, "loop")) vips_image_get_int(ready, "loop", &w.loop);
    if (vips_image_get_typeof(ready, "delay")) vips_image_get_array_int(ready, "delay", &w.delays, &w.n_delays);
    size_t n = frame_pixels(&w);
    w.rgba = g_try_malloc(n * 4 * (size_t)w.batch);
    w.index = g_try_malloc(n * (size_t)w.batch);
    w.answer = g_try_malloc(sizeof(quantized) * (size_t)w.batch);
    w.previous = w.frames > 1 ? g_try_malloc0(n * 4) : NULL;
    w.shown = w.frames > 1 ? g_try_malloc0(n * 4) : NULL;
    w.held.pixels = g_try_malloc(n);
    w.whole = g_try_malloc(n);
    w.out = g_byte_array_new();
    w.changes = w.frames > 1 ? recorded_changes(&w, in) : NULL;
    if (w.changes) plan_recording(&w, ready, w.changes);
    int result = -1;
    if (!w.rgba || !w.index || !w.answer || !w.held.pixels || !w.whole || (w.frames > 1 && (!w.previous || !w.shown)))
        vips_error("ph_gif_save", "out of memory for %d frames of %dx%d", w.batch, w.width, w.frame_height);
    else if (w.changes) {
        result = take_frames(&w, ready);
    } else {
        ph_handover_give(&w.handover);
        result = vips_sink_disc(ready, take_rows, &w);
        ph_handover_back(&w.handover);
    }
    if (result == 0 && w.held.held && put_held(&w, 0)) {
        vips_error("ph_gif_save", "giflib failed to write a frame: %s", GifErrorString(w.gif->Error));
        result = -1;
    }
    int error = 0;
    if (w.gif && EGifCloseFile(w.gif, &error) != GIF_OK && result == 0) {
        vips_error("ph_gif_save", "giflib failed to finish the file: %s", GifErrorString(error));
        result = -1;
    }
    g_free(w.rgba);
    g_free(w.index);
    g_free(w.answer);
    g_free(w.previous);
    g_free(w.shown);
    g_free(w.held.pixels);
    g_free(w.whole);
    if (w.recording) liq_result_destroy(w.recording);
    if (w.recording_attr) liq_attr_destroy(w.recording_attr);
    for (int t = 0; t < CHAINS; t++) {
        if (w.chains[t].result) liq_result_destroy(w.chains[t].result);
        if (w.chains[t].attr) liq_attr_destroy(w.chains[t].attr);
    }
    g_object_unref(ready);
    if (result == 0) {
        *length = w.out->len;
        *buffer = g_byte_array_free(w.out, FALSE);
    } else {
        g_byte_array_free(w.out, TRUE);
    }
    return result;
}
