// Helpers shared by the CVips sources and kept out of the Swift-imported headers (they use
// C11 atomics, which Swift's importer does not take).
#ifndef PH_INTERNAL_H
#define PH_INTERNAL_H

#include <stdatomic.h>
#include <vips/vips.h>

/// Whether the environment switch `name` is "0", read once into `*cache` (which starts at -1).
/// ph_vips_init has already refused any value but "0" and "1".
int ph_switched_off(const char *name, atomic_int *cache);

/// The field ph_copy_changed_frames sets on the frames it makes, which travels with them through
/// later operations: a ph_frame_changes blob, where each frame changed from the one before
/// (a screen recording's few pixels), so ph_gif_save.c can make one table for all the frames
/// from the boxes alone (plan_recording).
#define PH_FRAME_CHANGES_FIELD "pipelinehost-frame-changes"
typedef struct {
    int width, page_height, frames;
    // Where the frames made are, never read through this: a later operation may have made other
    // frames that still carry the field, so a reader of `ready` trusts the boxes only where its
    // pixels are at this address (ph_gif_save.c, reads_recorded).
    const VipsPel *pixels;
    size_t line; // bytes from one row to the next there
    VipsRect boxes[]; // `frames` boxes; frame 0's is the whole frame
} ph_frame_changes;

/// A colour table made ready for nearest-colour lookups (ph_gif_remap.c): its entries, but for
/// one left out, sorted by green.
typedef struct {
    int r, g, b, index;
} ph_gif_entry;
typedef struct {
    ph_gif_entry sorted[256];
    int count;
    int first[256]; // the first sorted entry with a green at least g
} ph_gif_nearest;

/// Makes `nearest` ready for the `colours` entries of `rgb`, entry `skip` left out (-1 for none).
void ph_gif_nearest_prepare(ph_gif_nearest *nearest, const unsigned char *rgb, int colours, int skip);

/// Maps `n` RGBA pixels (alpha already 0 or 255) into `index` with a table as it stands: the
/// opaque pixels to their nearest entry of `table`, the transparent ones to `transparent` (the
/// entry `table` was prepared without). ph_gif_save.c writes a recording's later frames with the
/// file's global table this way, without a table of their own. Returns 1 when the mapping is as
/// close as ph_gif_map_to_palette requires for `limit`, else 0.
int ph_gif_map_to_table(const ph_gif_nearest *table, int transparent, const unsigned char *rgba, size_t n,
                        double limit, unsigned char *index);

/// The next definition of `name` after the executable's own (the library's, for a function the
/// executable defines in its place, as ph_orc_guard.c and ph_vips_errors.c do), looked up once
/// into `*slot`. dlsym is thread safe; a race only looks it up twice.
void *ph_next_definition(_Atomic(void *) *slot, const char *name);

/// Copies `header`'s metadata (EXIF, ICC, XMP and every other field a loader set, but not the
/// built-in size, format and coding fields) onto `image`, with its interpretation and
/// resolution: for a decode done outside libvips whose header libvips read.
void ph_copy_header_fields(VipsImage *header, VipsImage *image);

/// Makes `*out`: an image with `in`'s fields, changed by `shape` (if not NULL) before any pixel
/// is asked for, whose pixels `generate` makes from a region of `in` (one per thread) and
/// `state`. `*out` holds `in` while it lives, as libvips' operations hold their inputs; `state`
/// stays the caller's (free it on a close signal of `*out`). 0, or -1 with nothing made.
int ph_generated_image(VipsImage *in, void (*shape)(VipsImage *image, void *state), VipsGenerateFn generate,
                       void *state, VipsImage **out);

/// A filter of one image, with its parameters.
typedef int (*ph_frame_filter)(VipsImage *in, VipsImage **out, const double *parameters);

/// Runs `filter` on each frame of an animation on its own and stacks the results again, so that
/// a neighbourhood filter (blur, sharpen) never takes colour from the next frame: an animation
/// is one tall image of stacked frames. A single frame is filtered as it is.
int ph_each_frame(VipsImage *in, ph_frame_filter filter, const double *parameters, VipsImage **out);

/// Resizes the frames of an animation, `page_in` rows each, down their columns to `page_out` rows
/// each, every frame on its own (ph_reducev_frames.c). 8-bit or float bands only.
int ph_reducev_frames(VipsImage *in, int page_in, int page_out, VipsImage **out);

/// How an animation's frames were resized and cut: output pixel (x, y) of a frame is computed
/// from the source frame's pixels around ((x + left + 0.5) * across - 0.5, (y + top + 0.5) *
/// down - 0.5), the centre convention of libvips' resize, within its kernel's reach.
typedef struct {
    double across, down;
    int left, top;
} ph_frame_geometry;

/// Computes `in`, an animation made from frames by `geometry`, into memory a frame at a time,
/// each from the one before and the pixels that read `changed[k]`, the box of source frame k
/// that differs from frame k - 1 (ph_gif_read_changes); `count` is how many boxes there are.
/// ph_frame_changes.c. 0 with `*out` made, -1 on an error, 1 (nothing made) where that would
/// not be quicker than computing every frame whole.
int ph_copy_changed_frames(VipsImage *in, const ph_frame_geometry *geometry, const VipsRect *changed, int count,
                           VipsImage **out);

/// Whether the kill flag of the work the calling thread runs (ph_vips_kill_attach) is set.
int ph_attached_kill_is_set(void);

/// `in` as 8-bit sRGB of three bands or four (with alpha), for an encoder of our own; any other
/// band count is an error naming `who`.
int ph_to_srgb8(VipsImage *in, const char *who, VipsImage **out);

/// State on a caller's stack that libvips' threads use during one computation. libvips orders
/// the hand-over through GLib, which ThreadSanitizer cannot see, so it is made visible: the
/// caller gives the state before the computation, each visit from a libvips thread enters
/// (acquires) first and leaves (releases) after, and the caller takes it back (acquires) once
/// the computation has returned.
typedef struct {
    atomic_int visits;
} ph_handover;

static inline void ph_handover_give(ph_handover *h) { atomic_store_explicit(&h->visits, 0, memory_order_release); }
static inline void ph_handover_enter(ph_handover *h) { (void)atomic_load_explicit(&h->visits, memory_order_acquire); }
static inline void ph_handover_leave(ph_handover *h) { atomic_fetch_add_explicit(&h->visits, 1, memory_order_release); }
static inline void ph_handover_back(ph_handover *h) { ph_handover_enter(h); }

/// VIPS_INIT without libvips' modules, which open when first needed (ph_vips_modules.c).
int ph_vips_start(const char *program);

/// Opens libvips' modules (HEIF, JPEG XL, PDF, OpenSlide) unless they are open: before a HEIF,
/// AVIF or JPEG XL save. Process-wide and idempotent.
void ph_vips_open_modules(void);

/// Opens them before reading `buffer`, unless libvips' built-in JPEG, PNG, GIF or WebP loader
/// reads it: call it before any loader lookup.
void ph_vips_modules_for(const void *buffer, size_t length);

#endif
