// AVIF read through libavif (dav1d, and libyuv for YUV to RGB) where libvips would use libheif.
//
// libvips 8.14 reads AVIF through libheif 1.15, whose YUV to RGB conversion is scalar C: on a
// 2040 px photo it costs more CPU than dav1d's decode of the whole frame (perf: 25% against
// 29% of a fit-in 512 answer, BENCHMARKS.md). libavif drives the same dav1d and converts with
// libyuv's SIMD code, as Pillow's AVIF plugin (thumbor's) does.
//
// libvips still reads the header (heifload, which parses the container only): its size and
// bands must be libavif's, and its metadata (EXIF, ICC, XMP, orientation) is copied onto the
// pixels, so everything after the decode sees what heifload would have given. Taken only for
// a still 8-bit image without transforms (no rotation, mirror or clean aperture, which libheif
// applies and libavif leaves to the caller) and without premultiplied alpha; anything else,
// any libavif error and every HEIC returns 0, and the caller reads the file through libvips as
// before, which decides as it always has. PIPELINEHOST_AVIF_LIBAVIF=0 switches it off.
#include "ph_internal.h"
#include "ph_vips.h"

#include <avif/avif.h>
#include <stdatomic.h>
#include <stdlib.h>

static atomic_long decodes;
static atomic_int switch_cache = -1;

long ph_avif_libavif_decodes(void) { return atomic_load(&decodes); }

static void free_pixels(VipsImage *image, void *pixels) {
    (void)image;
    free(pixels);
}

// The decoded frame as a libvips image of `bands` 8-bit bands, or NULL.
static VipsImage *to_rgb(const avifImage *frame, int bands) {
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, frame);
    rgb.format = bands == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = 8;
    rgb.rowBytes = frame->width * (uint32_t)bands;
    size_t size = (size_t)rgb.rowBytes * frame->height;
    if (!(rgb.pixels = malloc(size))) return NULL;
    if (avifImageYUVToRGB(frame, &rgb) != AVIF_RESULT_OK) {
        free(rgb.pixels);
        return NULL;
    }
    VipsImage *image = vips_image_new_from_memory(rgb.pixels, size, (int)frame->width, (int)frame->height, bands,
                                                  VIPS_FORMAT_UCHAR);
    if (!image) {
        vips_error_clear();
        free(rgb.pixels);
        return NULL;
    }
    g_signal_connect(image, "postclose", G_CALLBACK(free_pixels), rgb.pixels);
    return image;
}

int ph_avif_load(const void *buffer, size_t length, VipsImage **out) {
    if (ph_switched_off("PIPELINEHOST_AVIF_LIBAVIF", &switch_cache)) return 0;
    ph_vips_open_modules();  // the header is heifload's
    VipsImage *header = vips_image_new_from_buffer((void *)buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!header) {
        vips_error_clear();
        return 0;
    }
    avifDecoder *decoder = avifDecoderCreate();
    int taken = 0;
    if (!decoder) goto done;
    // One thread: the pipeline already runs about one decode per core.
    decoder->maxThreads = 1;
    decoder->ignoreExif = AVIF_TRUE;  // the metadata is heifload's, copied from its header
    decoder->ignoreXMP = AVIF_TRUE;
    decoder->imageSizeLimit = (uint32_t)MIN((guint64)header->Xsize * (guint64)header->Ysize, (guint64)UINT32_MAX);
    if (avifDecoderSetIOMemory(decoder, buffer, length) != AVIF_RESULT_OK ||
        avifDecoderParse(decoder) != AVIF_RESULT_OK)
        goto done;
    const avifImage *image = decoder->image;
    int bands = decoder->alphaPresent ? 4 : 3;
    if (decoder->imageCount != 1 || image->depth != 8 || image->transformFlags != AVIF_TRANSFORM_NONE ||
        image->alphaPremultiplied || image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400 ||
        header->Xsize != (int)image->width || header->Ysize != (int)image->height || header->Bands != bands ||
        header->BandFmt != VIPS_FORMAT_UCHAR)
        goto done;
    if (avifDecoderNextImage(decoder) != AVIF_RESULT_OK) goto done;
    VipsImage *decoded = to_rgb(decoder->image, bands);
    if (!decoded) goto done;
    ph_copy_header_fields(header, decoded);
    atomic_fetch_add(&decodes, 1);
    *out = decoded;
    taken = 1;
done:
    if (decoder) avifDecoderDestroy(decoder);
    g_object_unref(header);
    return taken;
}
