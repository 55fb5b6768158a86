// The vertical pass of an animation's resize, each frame on its own.
//
// libvips' thumbnail resizes an animation's stacked frames as one image: down a column its
// kernel reads past a frame's first and last rows into the frames before and after, and a red
// frame between blue ones came out with 16 levels of blue in its edge rows (FrameFilterTests).
// Resizing each frame through a pipeline of its own fixes that, but libvips' bookkeeping for
// one pipeline a frame made a 120-frame screen recording 2 to 3 times slower. So
// ph_vips_thumbnail_image resizes an animation down its columns here, then across its rows with
// libvips (vips_resize with a vscale of 1 makes no vertical pass): Lanczos 3 over the frame's own
// rows, its edge row repeated past its edge (as libvips extends an image's edges), to the same
// frame height libvips' thumbnail gives. Columns first because this pass reads whole rows, where
// the horizontal one gathers: the larger pass is the cheaper one. 8-bit images sum in 12-bit
// fixed point, as libvips' reducev does; float images (premultiplied alpha) in float.
#include "ph_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define FIXED_SHIFT 12
#define FIXED_ONE (1 << FIXED_SHIFT)

// The taps of every output row of a frame: the same for every frame, made once.
typedef struct {
    int page_in, page_out, taps;
    int *first;     // page_out first input rows, relative to the frame (clamped when read)
    float *weights; // page_out rows of `taps` weights summing to 1
    int *fixed;     // the same, times FIXED_ONE, summing to FIXED_ONE exactly
} reducev_plan;

static double lanczos3(double x) {
    if (x == 0) return 1;
    if (x <= -3 || x >= 3) return 0;
    double px = M_PI * x;
    return 3 * sin(px) * sin(px / 3) / (px * px);
}

static void free_plan(VipsImage *image, reducev_plan *plan) {
    (void)image;
    g_free(plan->first);
    g_free(plan->weights);
    g_free(plan->fixed);
    g_free(plan);
}

static reducev_plan *make_plan(int page_in, int page_out) {
    reducev_plan *plan = g_new0(reducev_plan, 1);
    double factor = (double)page_in / page_out, stretch = VIPS_MAX(factor, 1.0), support = 3 * stretch;
    plan->page_in = page_in;
    plan->page_out = page_out;
    plan->taps = (int)ceil(2 * support) + 1;
    plan->first = g_new(int, page_out);
    plan->weights = g_new(float, (size_t)page_out * plan->taps);
    plan->fixed = g_new(int, (size_t)page_out * plan->taps);
    for (int y = 0; y < page_out; y++) {
        // The centre convention libvips' resize uses: output row y covers input rows around
        // (y + 0.5) * factor - 0.5.
        double centre = (y + 0.5) * factor - 0.5, sum = 0;
        int first = (int)floor(centre - support) + 1;
        float *w = plan->weights + (size_t)y * plan->taps;
        int *fixed = plan->fixed + (size_t)y * plan->taps;
        plan->first[y] = first;
        for (int t = 0; t < plan->taps; t++) sum += w[t] = (float)lanczos3((first + t - centre) / stretch);
        int fixed_sum = 0, largest = 0;
        for (int t = 0; t < plan->taps; t++) {
            w[t] = (float)(w[t] / sum);
            fixed_sum += fixed[t] = (int)lrint(w[t] * FIXED_ONE);
            if (fixed[t] > fixed[largest]) largest = t;
        }
        fixed[largest] += FIXED_ONE - fixed_sum; // a flat frame stays exactly flat
    }
    return plan;
}

// The input row that tap `t` of output row `y` (of the whole stack) reads.
static int tap_row(const reducev_plan *plan, int y, int t) {
    int frame = y / plan->page_out, row = plan->first[y % plan->page_out] + t;
    return frame * plan->page_in + VIPS_CLIP(0, row, plan->page_in - 1);
}

// The most taps a row may have: a shrink of 80 (and a plan with more is refused).
#define MAX_TAPS 482

// One output row of 8-bit samples: the sum of `taps` rows weighted in fixed point, rounded and
// clipped. With SSE2, eight samples at a time and two taps per multiply (pmaddwd on the rows'
// samples paired as 16 bits), the same integer sums as the plain loop.
static void reduce_row_u8(const VipsPel *const *rows, const int *w, int taps, int elements, VipsPel *q) {
    int x = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128(), round = _mm_set1_epi32(FIXED_ONE / 2);
    for (; x + 8 <= elements; x += 8) {
        __m128i low = round, high = round;
        for (int t = 0; t < taps; t += 2) {
            int second = t + 1 < taps ? w[t + 1] : 0;
            const VipsPel *next = t + 1 < taps ? rows[t + 1] : rows[t];
            __m128i pair = _mm_set1_epi32((int)((uint32_t)(uint16_t)second << 16 | (uint16_t)w[t]));
            __m128i a = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(rows[t] + x)), zero);
            __m128i b = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(next + x)), zero);
            low = _mm_add_epi32(low, _mm_madd_epi16(_mm_unpacklo_epi16(a, b), pair));
            high = _mm_add_epi32(high, _mm_madd_epi16(_mm_unpackhi_epi16(a, b), pair));
        }
        low = _mm_srai_epi32(low, FIXED_SHIFT);
        high = _mm_srai_epi32(high, FIXED_SHIFT);
        __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(low, high), zero);
        _mm_storel_epi64((__m128i *)(q + x), bytes);
    }
#endif
    for (; x < elements; x++) {
        int sum = FIXED_ONE / 2;
        for (int t = 0; t < taps; t++) sum += w[t] * rows[t][x];
        q[x] = (VipsPel)VIPS_CLIP(0, sum >> FIXED_SHIFT, 255);
    }
}

static int reducev_generate(VipsRegion *out, void *sequence, void *a, void *b, gboolean *stop) {
    (void)stop, (void)a;
    VipsRegion *ir = sequence;
    const reducev_plan *plan = b;
    const VipsRect *r = &out->valid;
    int bottom = VIPS_RECT_BOTTOM(r) - 1;
    VipsRect need = {r->left, tap_row(plan, r->top, 0), r->width, 0};
    need.height = tap_row(plan, bottom, plan->taps - 1) - need.top + 1;
    if (vips_region_prepare(ir, &need)) return -1;
    const int elements = r->width * out->im->Bands;
    const int is_float = out->im->BandFmt == VIPS_FORMAT_FLOAT;
    for (int y = r->top; y <= bottom; y++) {
        int local = y % plan->page_out;
        VipsPel *q = VIPS_REGION_ADDR(out, r->left, y);
        if (is_float) {
            // Summed in the output row itself.
            float *sum = (float *)q;
            const float *w = plan->weights + (size_t)local * plan->taps;
            memset(sum, 0, (size_t)elements * sizeof(float));
            for (int t = 0; t < plan->taps; t++) {
                if (w[t] == 0) continue;
                const float *p = (const float *)VIPS_REGION_ADDR(ir, r->left, tap_row(plan, y, t));
                for (int x = 0; x < elements; x++) sum[x] += w[t] * p[x];
            }
        } else {
            const int *w = plan->fixed + (size_t)local * plan->taps;
            const VipsPel *rows[MAX_TAPS + 1];
            for (int t = 0; t < plan->taps; t++) rows[t] = VIPS_REGION_ADDR(ir, r->left, tap_row(plan, y, t));
            reduce_row_u8(rows, w, plan->taps, elements, q);
        }
    }
    return 0;
}

static void frames_of(VipsImage *image, void *state) {
    const reducev_plan *plan = state;
    image->Ysize = image->Ysize / plan->page_in * plan->page_out;
    vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, plan->page_out);
}

int ph_reducev_frames(VipsImage *in, int page_in, int page_out, VipsImage **out) {
    if ((in->BandFmt != VIPS_FORMAT_UCHAR && in->BandFmt != VIPS_FORMAT_FLOAT) || in->Coding != VIPS_CODING_NONE ||
        page_in < 1 || page_out < 1 || in->Ysize % page_in != 0) {
        vips_error("ph_reducev_frames", "8-bit or float frames only");
        return -1;
    }
    if (2 * 3 * (double)page_in / page_out + 2 > MAX_TAPS) {
        vips_error("ph_reducev_frames", "a shrink of %d rows to %d is over %d taps", page_in, page_out, MAX_TAPS);
        return -1;
    }
    reducev_plan *plan = make_plan(page_in, page_out);
    if (ph_generated_image(in, frames_of, reducev_generate, plan, out)) {
        free_plan(NULL, plan);
        return -1;
    }
    g_signal_connect(*out, "close", G_CALLBACK(free_plan), plan);
    return 0;
}
