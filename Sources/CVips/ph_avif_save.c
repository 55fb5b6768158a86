// Animated AVIF written through libavif, which libheif 1.15 (libvips' AVIF saver) cannot do:
// it writes still images only. libavif writes an AV1 image sequence with each frame's duration.
//
// The settings follow libvips' heifsave, so a still and an animation from one profile look
// alike: libaom's speed is 9 - effort, the quality maps to one quantizer as libheif's aom
// plugin maps it to cq-level, chroma is 4:2:0 unless the subsampling is off (or auto at
// quality 90 and over), and lossless is 4:4:4 with the identity matrix at quantizer 0, every
// frame a key frame. Frames come in order from libvips (vips_sink_disc), one frame held at a
// time, and libaom uses libvips' threads per operation. libavif 0.11 has no loop count: a
// sequence plays for ever.
#include "ph_internal.h"
#include "ph_vips.h"

#include <avif/avif.h>
#include <string.h>

typedef struct {
    int width, frame_height, frames, bands;
    VipsPel *frame;  // the frame being filled
    int filled_rows; // rows received so far
    int written;     // frames encoded so far
    int *delays, n_delays;
    const ph_save_options *options;
    avifEncoder *encoder;
    avifPixelFormat yuv;
    int lossless;
    ph_handover handover; // this writer lives on the caller's stack
} avif_writer;

// The AV1 quantizer (0 best, 63 worst) for a quality of 1 to 100, as libheif's aom plugin
// computes its cq-level.
static int quantizer(int quality) { return VIPS_CLIP(0, ((100 - quality) * 63 + 50) / 100, 63); }

static int encode_frame(avif_writer *w) {
    avifImage *image = avifImageCreate(w->width, w->frame_height, 8, w->yuv);
    if (!image) return -1;
    image->yuvRange = AVIF_RANGE_FULL;
    if (w->lossless) image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_IDENTITY;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = w->bands == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = 8;
    rgb.pixels = w->frame;
    rgb.rowBytes = (uint32_t)(w->width * w->bands);
    avifResult result = avifImageRGBToYUV(image, &rgb);
    if (result == AVIF_RESULT_OK) {
        // A frame shows for its delay, in milliseconds (the timescale); none stated is 100 ms,
        // and 0 is 1, as a sample cannot last no time.
        int delay = w->delays && w->written < w->n_delays ? w->delays[w->written] : 100;
        result = avifEncoderAddImage(w->encoder, image, (uint64_t)VIPS_MAX(1, delay), AVIF_ADD_IMAGE_FLAG_NONE);
    }
    avifImageDestroy(image);
    if (result != AVIF_RESULT_OK) {
        vips_error("ph_avif_save", "frame %d: %s", w->written + 1, avifResultToString(result));
        return -1;
    }
    w->written++;
    return 0;
}

static int take_frame_rows(avif_writer *w, VipsRegion *region, VipsRect *area) {
    size_t line = (size_t)w->width * w->bands;
    for (int y = 0; y < area->height; y++) {
        memcpy(w->frame + (size_t)(w->filled_rows % w->frame_height) * line,
               VIPS_REGION_ADDR(region, 0, area->top + y), line);
        w->filled_rows++;
        if (w->filled_rows % w->frame_height == 0 && encode_frame(w)) return -1;
    }
    return 0;
}

static int take_rows(VipsRegion *region, VipsRect *area, void *a) {
    avif_writer *w = a;
    ph_handover_enter(&w->handover);
    int result = take_frame_rows(w, region, area);
    ph_handover_leave(&w->handover);
    return result;
}

int ph_avif_save_sequence(VipsImage *in, const ph_save_options *options, void **buffer, size_t *length) {
    VipsImage *ready;
    if (ph_to_srgb8(in, "ph_avif_save", &ready)) return -1;
    avif_writer w = {0};
    w.width = ready->Xsize;
    w.frame_height = vips_image_get_page_height(ready);
    w.frames = ready->Ysize / w.frame_height;
    w.bands = ready->Bands;
    w.options = options;
    w.lossless = options->lossless;
    w.yuv = w.lossless || options->subsample == PH_SUBSAMPLE_OFF ||
                    (options->subsample == PH_SUBSAMPLE_AUTO && options->quality >= 90)
                ? AVIF_PIXEL_FORMAT_YUV444
                : AVIF_PIXEL_FORMAT_YUV420;
    if (vips_image_get_typeof(ready, "delay")) vips_image_get_array_int(ready, "delay", &w.delays, &w.n_delays);
    int result = -1;
    avifRWData output = AVIF_DATA_EMPTY;
    w.frame = g_try_malloc((size_t)w.width * w.frame_height * w.bands);
    if (!avifCodecName(AVIF_CODEC_CHOICE_AUTO, AVIF_CODEC_FLAG_CAN_ENCODE)) {
        vips_error("ph_avif_save", "this libavif has no AV1 encoder");
        goto done;
    }
    w.encoder = avifEncoderCreate();
    if (!w.frame || !w.encoder) {
        vips_error("ph_avif_save", "out of memory for a frame of %dx%d", w.width, w.frame_height);
        goto done;
    }
    w.encoder->maxThreads = VIPS_MAX(1, vips_concurrency_get());
    w.encoder->speed = VIPS_CLIP(AVIF_SPEED_SLOWEST, 9 - options->effort, AVIF_SPEED_FASTEST);
    w.encoder->timescale = 1000;
    int q = w.lossless ? AVIF_QUANTIZER_LOSSLESS : quantizer(options->quality);
    w.encoder->minQuantizer = w.encoder->maxQuantizer = q;
    w.encoder->minQuantizerAlpha = w.encoder->maxQuantizerAlpha = q;
    // libaom 3.6 at quantizer 0 is exact on key frames only: its predicted frames came back a
    // level off here and there (AnimationOutputTests.avifLossless), so lossless is all key frames.
    if (w.lossless) w.encoder->keyframeInterval = 1;
    ph_handover_give(&w.handover);
    int sunk = vips_sink_disc(ready, take_rows, &w);
    ph_handover_back(&w.handover);
    if (sunk) goto done;
    avifResult finished = avifEncoderFinish(w.encoder, &output);
    if (finished != AVIF_RESULT_OK) {
        vips_error("ph_avif_save", "%s", avifResultToString(finished));
        goto done;
    }
    *buffer = g_memdup2(output.data, output.size);
    *length = output.size;
    result = 0;
done:
    avifRWDataFree(&output);
    if (w.encoder) avifEncoderDestroy(w.encoder);
    g_free(w.frame);
    g_object_unref(ready);
    return result;
}
