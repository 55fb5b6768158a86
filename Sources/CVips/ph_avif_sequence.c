// Animated AVIF (an AV1 image sequence, ftyp brand "avis") read through libavif: libvips 8.14
// reads AVIF through libheif 1.15, which reads still images only and finds no loader for a
// sequence.
//
// The image is lazy, as libvips' own loaders are: opening it parses the container (the frame
// count, size and timing), and the first pixel asked for decodes the frames, in order, up to
// the one that holds it. So decode checks max_frames and max_pixels, and the memory budget is
// drawn, before any frame is decoded. It carries what libvips' animated loaders set (page
// height, n-pages, each frame's delay, loop 0: libavif 0.11 reads no loop count) and the ICC
// profile, with "avifload" as its loader, so every stage after it treats it as any animation.
#include "ph_internal.h"
#include "ph_vips.h"

#include <avif/avif.h>
#include <string.h>

int ph_avif_is_sequence(const void *buffer, size_t length) {
    return length >= 12 && memcmp((const char *)buffer + 4, "ftypavis", 8) == 0;
}

// What the lazy image's pixels come from; freed with the image.
typedef struct {
    GMutex lock;
    avifDecoder *decoder;
    int width, height, bands, frames;
    // Frames decoded so far, into `pixels` (every frame kept, stacked); set to -1 by a failure.
    int decoded;
    VipsPel *pixels;
} sequence;

static void free_sequence(VipsImage *image, sequence *s) {
    (void)image;
    if (s->decoder) avifDecoderDestroy(s->decoder);
    g_free(s->pixels);
    g_mutex_clear(&s->lock);
    g_free(s);
}

// Decodes frames in order through frame `last`; 0 with the libvips error set when one fails
// (then every later demand fails too). Called with the lock held.
static int decode_through(sequence *s, int last) {
    if (s->decoded < 0) {
        vips_error("ph_avif_sequence", "an earlier frame did not decode");
        return 0;
    }
    size_t frame_bytes = (size_t)s->width * s->height * s->bands;
    if (!s->pixels && !(s->pixels = g_try_malloc(frame_bytes * s->frames))) {
        vips_error("ph_avif_sequence", "out of memory for %d frames of %dx%d", s->frames, s->width, s->height);
        s->decoded = -1;
        return 0;
    }
    while (s->decoded <= last) {
        avifResult next = avifDecoderNextImage(s->decoder);
        const avifImage *image = s->decoder->image;
        if (next != AVIF_RESULT_OK || (int)image->width != s->width || (int)image->height != s->height) {
            vips_error("ph_avif_sequence", "frame %d does not decode: %s", s->decoded + 1,
                       next != AVIF_RESULT_OK ? avifResultToString(next) : "its size differs from the first's");
            s->decoded = -1;
            return 0;
        }
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, image);
        rgb.format = s->bands == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
        rgb.depth = 8;
        rgb.pixels = s->pixels + frame_bytes * s->decoded;
        rgb.rowBytes = (uint32_t)(s->width * s->bands);
        if (avifImageYUVToRGB(image, &rgb) != AVIF_RESULT_OK) {
            vips_error("ph_avif_sequence", "frame %d does not convert to RGB", s->decoded + 1);
            s->decoded = -1;
            return 0;
        }
        s->decoded++;
    }
    return 1;
}

static int generate(VipsRegion *out, void *seq, void *a, void *b, gboolean *stop) {
    (void)seq, (void)b, (void)stop;
    sequence *s = a;
    const VipsRect *r = &out->valid;
    g_mutex_lock(&s->lock);
    int ready = decode_through(s, (r->top + r->height - 1) / s->height);
    g_mutex_unlock(&s->lock);
    if (!ready) return -1;
    // Decoded rows are never written again: they are read outside the lock.
    size_t line = (size_t)s->width * s->bands;
    for (int y = 0; y < r->height; y++) {
        const VipsPel *row = s->pixels + (size_t)(r->top + y) * line + (size_t)r->left * s->bands;
        memcpy(VIPS_REGION_ADDR(out, r->left, r->top + y), row, (size_t)r->width * s->bands);
    }
    return 0;
}

VipsImage *ph_avif_sequence_open(const void *buffer, size_t length, int pages) {
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        vips_error("ph_avif_sequence", "out of memory");
        return NULL;
    }
    // One thread: the pipeline already runs about one decode per core.
    decoder->maxThreads = 1;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult parsed = avifDecoderSetIOMemory(decoder, buffer, length);
    if (parsed == AVIF_RESULT_OK) parsed = avifDecoderParse(decoder);
    const avifImage *first = decoder->image;
    if (parsed != AVIF_RESULT_OK || decoder->imageCount < 1 || first->width < 1 || first->height < 1) {
        vips_error("ph_avif_sequence", "not an AVIF sequence libavif reads: %s",
                   parsed != AVIF_RESULT_OK ? avifResultToString(parsed) : "no frames");
        avifDecoderDestroy(decoder);
        return NULL;
    }
    // libheif applies a rotation, mirror or crop box; libavif leaves them to the caller.
    if (first->transformFlags != AVIF_TRANSFORM_NONE) {
        vips_error("ph_avif_sequence", "an animated AVIF with a rotation, mirror or crop box is not read yet");
        avifDecoderDestroy(decoder);
        return NULL;
    }
    int count = decoder->imageCount, frames = VIPS_CLIP(1, pages, count);
    int width = (int)first->width, height = (int)first->height, bands = decoder->alphaPresent ? 4 : 3;
    if ((guint64)height * frames > (guint64)VIPS_MAX_COORD) {
        vips_error("ph_avif_sequence", "%d frames of %dx%d are too tall for one image", frames, width, height);
        avifDecoderDestroy(decoder);
        return NULL;
    }
    int *delays = g_new0(int, count);
    for (int k = 0; k < count; k++) {
        avifImageTiming timing;
        if (avifDecoderNthImageTiming(decoder, (uint32_t)k, &timing) == AVIF_RESULT_OK)
            delays[k] = (int)VIPS_RINT(timing.duration * 1000);
    }
    VipsImage *out = vips_image_new();
    vips_image_init_fields(out, width, height * frames, bands, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE,
                           VIPS_INTERPRETATION_sRGB, 1.0, 1.0);
    vips_image_pipelinev(out, VIPS_DEMAND_STYLE_ANY, NULL);
    vips_image_set_string(out, VIPS_META_LOADER, "avifload");
    vips_image_set_int(out, VIPS_META_PAGE_HEIGHT, height);
    vips_image_set_int(out, VIPS_META_N_PAGES, count);
    vips_image_set_array_int(out, "delay", delays, count);
    vips_image_set_int(out, "loop", 0);
    g_free(delays);
    if (first->icc.size > 0) vips_image_set_blob_copy(out, VIPS_META_ICC_NAME, first->icc.data, first->icc.size);
    sequence *s = g_new0(sequence, 1);
    g_mutex_init(&s->lock);
    s->decoder = decoder;
    s->width = width, s->height = height, s->bands = bands, s->frames = frames;
    g_signal_connect(out, "postclose", G_CALLBACK(free_sequence), s);
    if (vips_image_generate(out, NULL, generate, NULL, s, NULL)) {
        g_object_unref(out);
        return NULL;
    }
    return out;
}
