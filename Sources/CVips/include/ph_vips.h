// Fixed-arity wrappers over the variadic libvips calls the pipeline uses.
// Every function returns 0 on success and -1 on failure, with the reason in vips' error buffer
// (read it with ph_vips_errors_since). Images are GObjects: release each with ph_vips_unref.
#ifndef PH_VIPS_H
#define PH_VIPS_H

#include <stddef.h>
#include <stdint.h>
#include <vips/vips.h>

/// Starts libvips once for the process, whoever calls first: the operation cache off, untrusted
/// loaders blocked, run-time SIMD code (liborc) on only behind ph_orc_guard.c's lock. Each
/// call then sets `concurrency` worker threads per pipeline (0 keeps what is set).
int ph_vips_init(const char *program, int concurrency);
/// Whether libvips runs its run-time SIMD code (liborc): on when the guard below is in place,
/// unless PIPELINEHOST_VIPS_VECTOR=0 or VIPS_NOVECTOR is set.
int ph_vips_vector_enabled(void);
/// Whether libvips' calls to liborc's compile and free reach ph_orc_guard.c's locked versions.
int ph_orc_guard_active(void);
/// How many compiles and frees of Orc programs went through that lock so far.
long ph_orc_guarded_calls(void);
/// How many of libjpeg's large blocks (a progressive JPEG's coefficients) were mapped on huge
/// pages so far (ph_jpeg_memory.c).
long ph_jpeg_huge_blocks(void);
/// How many of those blocks were kept from an earlier decode and used again.
long ph_jpeg_reused_blocks(void);
/// The most bytes of freed blocks kept for the next decode (128 MiB unless set).
void ph_jpeg_set_kept_limit(size_t bytes);
/// Decodes a progressive JPEG at DCT scale 1/`shrink` without the AC scans of components whose
/// IDCT reads DC alone at that scale, with libvips' header and metadata for that scale
/// (ph_jpeg_scans.c). Returns 1 with `*out` set, or 0 when it does not apply (not 1/8, not
/// progressive, CMYK, no EOI, nothing to leave out, any libjpeg warning,
/// PIPELINEHOST_JPEG_EARLY_STOP=0): then the caller loads as usual.
int ph_jpeg_load_needed_scans(const void *buffer, size_t length, int shrink, VipsImage **out);
/// libvips' jpegload at DCT scale 1/`shrink`, lazily, every scan read: the normal path, which
/// refuses a truncated file.
int ph_jpeg_load_whole(const void *buffer, size_t length, int shrink, VipsImage **out);
/// How many decodes left scans out so far.
long ph_jpeg_early_stops(void);

/// Reads a still 8-bit AVIF through libavif (dav1d and libyuv) instead of libvips' heifload,
/// with heifload's header and metadata (ph_avif_load.c). Returns 1 with `*out` set, or 0 when
/// it does not apply (HEIC, a sequence, more than 8 bits, a rotation, mirror or crop, any
/// libavif error, or switched off); the caller then reads the file through libvips.
int ph_avif_load(const void *buffer, size_t length, VipsImage **out);
/// How many AVIF files were read through libavif so far.
long ph_avif_libavif_decodes(void);

/// A place in the error log (ph_vips_errors.c): take it before an operation that may fail.
uint64_t ph_vips_error_mark(void);
/// The messages libvips logged from `mark` on, one per line (g_free it): the calling thread's
/// errors (its warnings if it logged none), then the other threads' alike; each text once,
/// cleared ones left out; NULL when there are none. Nothing is taken away: another failure at
/// the same moment reads its own too.
char *ph_vips_errors_since(uint64_t mark);
/// Keeps one of libvips' warnings, read by a failure that logged no error.
void ph_vips_log_warning(const char *message);
/// Whether libvips' calls to its error functions reach ph_vips_errors.c's definitions.
int ph_vips_errors_interposed(void);

/// The loader libvips would pick for these bytes ("jpegload_buffer", ...), or NULL.
const char *ph_vips_find_loader(const void *buffer, size_t length);

/// Opens the header only; pixels are decoded on demand. `buffer` must outlive the image.
/// `pages` frames of an animated or multi-page file are loaded as one tall image (1: the first).
VipsImage *ph_vips_open(const void *buffer, size_t length, int pages);

/// The number of pages (frames) the file holds, or 1. Read from the "n-pages" field itself:
/// vips_image_get_n_pages answers 1 for 10,000 pages or more.
int ph_vips_page_count(VipsImage *image);

/// The loader libvips would use for these bytes, as a format name ("jpeg", "tiff", "pdf": its
/// nickname without "load_buffer"), and whether that loader is blocked in this process.
/// Returns 0 when no loader recognises the bytes.
int ph_vips_loader_format(const void *buffer, size_t length, char *format, size_t size, int *blocked);

/// Counts the image directories (pages) of a TIFF or BigTIFF by following the chain of IFD
/// offsets, without reading any directory's entries, and stops after `limit` + 1. Returns 0
/// when the bytes are not a TIFF. A file whose chain leaves the buffer counts what it had.
int ph_tiff_page_count(const void *buffer, size_t length, int limit);
/// The height of one page: the image height unless several pages were loaded.
int ph_vips_page_height(VipsImage *image);

/// How a thumbnail meets its box. NONE keeps the whole image inside it; the others fill it and
/// crop: the centre, libvips' smartcrop (ATTENTION: skin tones, saturation and edges; ENTROPY:
/// the busiest part), or AT: the window centred as near as it can be on (x, y), fractions of
/// the scaled image's width and height, so a gravity is a point on the edge (north: 0.5, 0).
/// Several pages (an animation) always crop the centre.
typedef enum { PH_CROP_NONE = 0, PH_CROP_CENTRE = 1, PH_CROP_ATTENTION = 2, PH_CROP_ENTROPY = 3, PH_CROP_AT = 4 } ph_crop_mode;
typedef struct {
    ph_crop_mode mode;
    double x, y;
} ph_crop;

/// Shrink-on-load thumbnail straight from encoded bytes: honours EXIF orientation, imports
/// any embedded ICC profile and exports sRGB.
int ph_vips_thumbnail_buffer(const void *buffer, size_t length, int width, int height, ph_crop crop,
                             int enlarge, int pages, VipsImage **out);
/// The same for a JPEG, loaded first at the largest DCT scale (1/2, 1/4, 1/8) that still covers
/// the box, then resized: less decoding and resizing than libvips' own choice, which leaves a
/// factor of two for the final resize. What PIL's draft mode (and so thumbor) does. Other
/// formats, and JPEGs too small to scale, go to ph_vips_thumbnail_buffer.
int ph_vips_thumbnail_buffer_draft(const void *buffer, size_t length, int width, int height, ph_crop crop,
                                   int enlarge, int pages, VipsImage **out);
/// The DCT scale (1, 2, 4 or 8) ph_vips_thumbnail_buffer_draft loads a JPEG at for the box
/// (`fill`: a crop's, both sides covered; else one side); 1 for other formats, -1 on an error.
int ph_vips_jpeg_draft_shrink(const void *buffer, size_t length, int width, int height, int fill);
/// The JPEG loaded at that scale, as ph_vips_thumbnail_buffer_draft loads it before resizing:
/// what a stage that looks at a small copy (faces) keeps for downsample to resize from.
int ph_vips_jpeg_draft(const void *buffer, size_t length, int shrink, VipsImage **out);
/// The same for an image already in memory (no shrink-on-load possible).
int ph_vips_thumbnail_image(VipsImage *in, int width, int height, ph_crop crop, int enlarge,
                            VipsImage **out);
/// The same for the frames of the GIF `gif`, whose blocks say which box of each frame changed
/// (ph_gif_read_changes): where few pixels change (a screen recording), each frame is computed
/// into memory as the frame before with only the pixels that read a changed box made afresh,
/// the same pixels as computing every frame whole, in a fraction of the time.
int ph_vips_thumbnail_gif_frames(VipsImage *in, const void *gif, size_t length, int width, int height, ph_crop crop,
                                 int enlarge, VipsImage **out);
/// How many animations this process resized a changed box at a time (ph_frame_changes.c).
long ph_frame_change_resizes(void);

/// Applies and removes the EXIF orientation.
int ph_vips_autorotate(VipsImage *in, VipsImage **out);
/// Computes a lazy image into memory. The result can be read by several threads at once and
/// any number of times; a lazy image opened for sequential access can be read only once.
int ph_vips_copy_memory(VipsImage *in, VipsImage **out);

/// A flag that stops pixel work: set from any thread, checked for every region that
/// ph_vips_copy_memory and ph_vips_save compute on the thread it is attached to. libvips then
/// fails the call ("cancelled"), so cancelled work gives its core back within a region.
typedef struct ph_vips_kill ph_vips_kill;
ph_vips_kill *ph_vips_kill_new(void);
void ph_vips_kill_set(ph_vips_kill *kill);
int ph_vips_kill_is_set(const ph_vips_kill *kill);
void ph_vips_kill_free(ph_vips_kill *kill);
/// Attaches `kill` (or NULL) to the calling thread, for the calls it makes next.
void ph_vips_kill_attach(ph_vips_kill *kill);
/// Threads libvips uses inside one operation.
void ph_vips_set_concurrency(int threads);
/// Converts to 8-bit sRGB when the image is in any other space. An embedded ICC profile (a
/// CMYK, Display-P3 or Adobe RGB image, say) is honoured: the pixels are transformed from it,
/// and the sRGB profile is attached instead.
int ph_vips_to_srgb(VipsImage *in, VipsImage **out);
/// The image without its ICC profile: its pixels read as the device's own colours (no lcms
/// transform), for a copy only a detector looks at, where a shade more or less changes nothing.
int ph_vips_device_colours(VipsImage *in, VipsImage **out);
/// ph_vips_to_srgb's common case (3-band 8-bit RGB with an RGB profile) through a transform kept
/// per distinct profile: 0 with `out` set, 1 when the image is not such a case (or
/// PIPELINEHOST_COLOUR_TRANSFORM_CACHE=0), -1 on failure.
int ph_vips_icc_to_srgb_kept(VipsImage *in, VipsImage **out);
/// How many images the kept transform of this profile has served; -1 when none is kept.
int ph_vips_colour_transform_uses(const void *profile, size_t length);
/// Gaussian blur. `approximate` uses libvips' approximate precision (a sum of box filters): at
/// the strong sigmas of a background blur it costs a third of the exact integer mask with liborc
/// off, and differs from it by about 0.1/255 on average (VipsStageTests measures it).
int ph_vips_gaussblur(VipsImage *in, double sigma, int approximate, VipsImage **out);
/// Scales by `hscale` and `vscale` with a linear kernel: enough for a blurred image, which has
/// no detail for a wider kernel to keep.
int ph_vips_rescale(VipsImage *in, double hscale, double vscale, VipsImage **out);
/// Multiplies the colour bands by `factor` (alpha untouched), keeping 8-bit pixels.
int ph_vips_darken(VipsImage *in, double factor, VipsImage **out);

typedef enum { PH_FORMAT_JPEG = 0, PH_FORMAT_PNG = 1, PH_FORMAT_WEBP = 2, PH_FORMAT_AVIF = 3, PH_FORMAT_GIF = 4, PH_FORMAT_JXL = 5 } ph_format;

/// Chroma subsampling: the encoder's choice (on below quality 90), always, or never.
typedef enum { PH_SUBSAMPLE_AUTO = 0, PH_SUBSAMPLE_ON = 1, PH_SUBSAMPLE_OFF = 2 } ph_subsample;

/// The colours a GIF frame is drawn from (ph_gif_palettes.c): `colours` entries of `rgb`, none
/// of them the transparent one; 0 when the frame has no table, its own or a global one.
typedef struct {
    unsigned char rgb[256 * 3];
    int colours;
} ph_gif_palette;

/// ph_gif_read_palettes' answer where the first frame's pixels decide whether all are opaque.
#define PH_GIF_OPAQUE_IF_FIRST_IS 2

/// How to encode. Options a format does not have are ignored by it.
typedef struct {
    /// 1-100: jpeg, webp, avif, jxl.
    int quality;
    /// Drop EXIF, XMP, IPTC and the ICC profile.
    int strip;
    /// With strip: keep the ICC profile, drop the rest.
    int keep_icc;
    /// The encoder's own effort, which the caller fits to its range and chooses when the
    /// profile says nothing: webp 0-6, avif 0-9, jxl 1-9, png 0-9 (zlib's level with adaptive row
    /// filters; 0: level 1, no filter).
    int effort;
    /// webp, avif, jxl.
    int lossless;
    /// Progressive jpeg, interlaced png.
    int progressive;
    /// jpeg, avif.
    ph_subsample subsample;
    /// jpeg: Huffman tables made for the image, not the standard ones.
    int optimize_coding;
} ph_save_options;

/// Where a save failed: computing the input's pixels (a damaged source, found only now because
/// decoding is lazy), or in the saver itself.
typedef enum { PH_SAVE_OK = 0, PH_SAVE_FAILED_INPUT = 1, PH_SAVE_FAILED_SAVER = 2 } ph_save_failure;

/// Encodes to a g_malloc'd buffer (free with ph_vips_free). An image of several pages (see
/// ph_vips_page_height) becomes an animation in webp and gif. On failure, `failure` says where
/// it happened: the saver reads `in` through a pass-through stage that notes when producing the
/// input's pixels failed, so no error text needs reading.
/// A GIF keeps `gif_palettes`, the source GIF's palettes frame by frame (ph_gif_read_palettes),
/// where they are close enough (NULL: none).
int ph_vips_save(VipsImage *in, ph_format format, const ph_save_options *options, const ph_gif_palette *gif_palettes,
                 int gif_palette_count, void **buffer, size_t *length, ph_save_failure *failure);
/// The first frame of an animation as a still image (no page height, delays or loop count),
/// for a format that does not animate: a JPEG of frame one, not of the strip of frames.
int ph_vips_first_frame(VipsImage *in, VipsImage **out);

/// Reads the palettes of the first `max_frames` frames of a GIF into `out` from the file's
/// blocks, decoding no pixel. Returns how many frames it read (0 for anything but a GIF); a
/// damaged file gives the frames before the damage. `opaque` (if not NULL) is set to whether
/// those frames are all opaque once composed: 1 where the first covers the screen without a
/// transparent index, and none is cleared or restored after it is shown, or drawn past the
/// screen; PH_GIF_OPAQUE_IF_FIRST_IS where all that holds but the first frame has a transparent
/// index, so its pixels decide (ph_gif_composes_opaque); 0 otherwise, and for a damaged file.
int ph_gif_read_palettes(const void *buffer, size_t length, ph_gif_palette *out, int max_frames, int *opaque);

/// What changes from frame to frame of a GIF, from its blocks, decoding no pixel: `out[k]` is
/// the box of the screen (the first frame's size) outside which frame k, composed, shows what
/// frame k - 1 showed (frame k's own box, and the box before where that frame is cleared or
/// restored); `out[0]` is the whole screen. Returns how many frames it read, up to `max_frames`,
/// or 0 where it cannot tell: anything but a GIF, a damaged file, a frame drawn past the screen.
int ph_gif_read_changes(const void *buffer, size_t length, VipsRect *out, int max_frames);

/// Whether every frame of a GIF composes opaque, given ph_gif_read_palettes' `opaque` answer:
/// where the blocks leave it to the first frame's pixels, that frame alone is decoded to tell.
int ph_gif_composes_opaque(const void *buffer, size_t length, int opaque);

/// Maps `n` RGBA pixels (alpha already 0 or 255) to the nearest colours of `source`, as gifsicle
/// does when it resizes, into `index`, with the palette to write (`source` and a transparent
/// entry) in `palette`, `colours` and `transparent`. Returns 1 when the mapping is close enough
/// to keep (a mean squared error a channel of at most `limit`, and few far pixels:
/// ph_gif_remap.c), 0 when the frame should be quantized instead.
int ph_gif_map_to_palette(const ph_gif_palette *source, const unsigned char *rgba, size_t n, double limit,
                          unsigned char *index, unsigned char *palette, int *colours, int *transparent);

/// The error ph_gif_save.c lets a kept source palette have where it knows no better: 40 dB.
#define PH_GIF_KEEP_ERROR 6.5

/// Gives `n` RGBA pixels (alpha already 0 or 255) a palette of exactly their colours, when they
/// have at most 255, with a transparent entry after them for the transparent pixels: `index`,
/// `palette`, `colours` and `transparent` as ph_gif_map_to_palette gives them. Returns 0, having
/// looked at no more pixels than it took to find a 256th colour, when they have more.
int ph_gif_exact_palette(const unsigned char *rgba, size_t n, unsigned char *index, unsigned char *palette,
                         int *colours, int *transparent);

/// Writes `in` (a still, or an animation of stacked frames) as a GIF into a g_malloc'd buffer,
/// `threads` frames quantized side by side (ph_gif_save.c); 0 writes through libvips' own saver.
/// `effort` is libvips' (1 to 10). Frame k keeps `palettes[k]`, the source's, where mapping
/// it to that palette is close enough; the others are quantized (`palettes` may be NULL).
int ph_gif_save_buffer(VipsImage *in, int strip, int effort, int threads, const ph_gif_palette *palettes,
                       int palette_count, void **buffer, size_t *length);

/// Writes `in`, an animation of stacked frames, as an AVIF image sequence through libavif
/// (ph_avif_save.c) with each frame's delay, into a g_malloc'd buffer: quality, effort (libaom's
/// speed is 9 - effort), lossless and subsampling as for a still.
int ph_avif_save_sequence(VipsImage *in, const ph_save_options *options, void **buffer, size_t *length);

/// Whether the bytes are an AVIF image sequence (ftyp brand "avis"): an animated AVIF, which
/// ph_vips_open, the thumbnail calls and ph_vips_loader_format ("heif") read through libavif.
int ph_avif_is_sequence(const void *buffer, size_t length);

/// An AVIF image sequence's first `pages` frames (1 below 1, at most all), stacked as 8-bit sRGB
/// with libvips' animation fields (page height, n-pages: every frame in the file, each frame's
/// delay in ms, loop 0) and its ICC profile. Lazy: the container is parsed here, the frames are
/// decoded when a pixel is first asked for. `buffer` must outlive the image. NULL, with the
/// libvips error set, when libavif cannot read it (ph_avif_sequence.c).
VipsImage *ph_avif_sequence_open(const void *buffer, size_t length, int pages);

/// The threads a GIF is quantized on: libvips' threads per operation, or 0 when
/// PIPELINEHOST_GIF_THREADS=0.
int ph_gif_threads(void);

/// How many horizontal reduces ph_reduceh.c has built (libvips' resize reaches its vips_reduceh
/// through the PLT), so a test can tell its loop, not libvips' own, made the pixels.
long ph_reduceh_builds(void);
/// libvips' reduceh of `in` by `hshrink` with `kernel` (a VipsKernel) and `gap`, as libvips'
/// resize asks for it: through ph_reduceh.c where it takes the image.
int ph_vips_reduceh(VipsImage *in, double hshrink, int kernel, double gap, VipsImage **out);
/// The same through libvips' own reduceh operation, whatever the image: the reference the
/// tests hold ph_reduceh.c to.
int ph_vips_reduceh_libvips(VipsImage *in, double hshrink, int kernel, double gap, VipsImage **out);

/// Lets libvips' JPEG XL loader read input (opening its module). It is marked untrusted in this
/// libvips, so it stays blocked until a profile lists "jxl" among its decode formats.
void ph_vips_allow_jxl_input(void);

/// Opens libvips' ImageMagick module (and the others, if they are not open yet), its loaders
/// blocked: a profile listed "magick", so a file only ImageMagick reads is named as blocked,
/// not as unknown. Process-wide and idempotent.
void ph_vips_open_magick(void);

/// Whether this libvips can write the format.
int ph_vips_can_save(ph_format format);

/// What libvips holds right now, for leak checks: live VipsObjects (images, operations,
/// sources), bytes and blocks it allocated through its tracker, and files it has open.
typedef struct {
    int objects;
    size_t tracked_bytes;
    int tracked_allocations;
    int open_files;
} ph_vips_usage;
ph_vips_usage ph_vips_current_usage(void);

static inline void ph_vips_unref(VipsImage *image) { if (image) g_object_unref(image); }
static inline void ph_vips_free(void *pointer) { g_free(pointer); }
static inline int ph_vips_width(VipsImage *image) { return vips_image_get_width(image); }
static inline int ph_vips_height(VipsImage *image) { return vips_image_get_height(image); }
static inline int ph_vips_bands(VipsImage *image) { return vips_image_get_bands(image); }

#endif
