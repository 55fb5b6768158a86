// libvips 8.14's horizontal reduce (reduceh) for 8-bit pixels, two kernel taps at a time.
//
// 8.14 reduces down a column with liborc's generated SIMD (reducev) but across a row with a
// plain loop: for each output pixel and band, a sum over the kernel's taps (15 for lanczos3 at
// a shrink of 2.4), one multiply at a time. perf put that loop at a quarter of the CPU of a
// screen recording's resize, and at 23% of a 2040 px photo's fit into 512 (issue 48's gnome).
//
// libvips' resize calls vips_reduceh through its PLT, so the definition here, exported from
// the executable, is the one it reaches (as ph_orc_guard.c does for liborc). For 8-bit images
// of one to four bands it builds the same output as libvips' own: the same size and offset,
// the same fixed-point coefficients (each kernel's mask, copied from 8.14's templates.h, times
// 4096 and truncated), the same integer sums, rounding and clipping. So the pixels are the
// same bytes; only the loop differs: SSE2's pmaddwd multiplies two taps of every band and adds
// them in one instruction. Anything else, any libvips but 8.14, and PIPELINEHOST_REDUCEH=0 go
// to libvips' own reduceh.
#include "ph_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_POINT 2000                    // libvips 8.14's presample.h
#define PHASES (VIPS_TRANSFORM_SCALE + 1) // a mask for each 1/64 pixel, both ends included

// What the generate function reads: made once per reduce, read-only after.
typedef struct {
    atomic_int ready; // set (release) once the plan is whole; see reduce_generate
    double hshrink, hoffset;
    int n_point, width;
    int *matrixi; // PHASES masks of n_point coefficients: libvips' fixed-point ones
#if defined(__SSE2__)
    __m128i *pairs; // the same as PHASES rows of (n_point + 1) / 2 pairs, each pair in four lanes
#endif
} reduce_plan;

static atomic_int switch_cache = -1;
static atomic_long builds;

long ph_reduceh_builds(void) { return atomic_load(&builds); }

// The kernels' masks, as 8.14's templates.h and reduceh.cpp make them.
static int points(VipsKernel kernel, double shrink) {
    switch (kernel) {
    case VIPS_KERNEL_NEAREST: return 1;
    case VIPS_KERNEL_LINEAR: return 2 * rint(shrink) + 1;
    case VIPS_KERNEL_CUBIC:
    case VIPS_KERNEL_MITCHELL:
    case VIPS_KERNEL_LANCZOS2: return 2 * rint(2 * shrink) + 1;
    case VIPS_KERNEL_LANCZOS3: return 2 * rint(3 * shrink) + 1;
    default: return 0;
    }
}

static void triangle(double *c, double shrink, double x) {
    const int n_points = 2 * rint(shrink) + 1;
    const double half = x + n_points / 2.0 - 1;
    double sum = 0;
    for (int i = 0; i < n_points; i++) {
        const double xp = (i - half) / shrink;
        double l = 1.0 - fabs(xp);
        l = VIPS_MAX(0.0, l);
        c[i] = l;
        sum += l;
    }
    for (int i = 0; i < n_points; i++) c[i] /= sum;
}

static void cubic(double *c, double shrink, double x, double B, double C) {
    const int n_points = 2 * rint(2 * shrink) + 1;
    const double half = x + n_points / 2.0 - 1;
    double sum = 0;
    for (int i = 0; i < n_points; i++) {
        const double xp = (i - half) / shrink;
        const double axp = fabs(xp);
        const double axp2 = axp * axp;
        const double axp3 = axp2 * axp;
        double l;
        if (axp <= 1) l = ((12 - 9 * B - 6 * C) * axp3 + (-18 + 12 * B + 6 * C) * axp2 + (6 - 2 * B)) / 6;
        else if (axp <= 2)
            l = ((-B - 6 * C) * axp3 + (6 * B + 30 * C) * axp2 + (-12 * B - 48 * C) * axp + (8 * B + 24 * C)) / 6;
        else l = 0.0;
        c[i] = l;
        sum += l;
    }
    for (int i = 0; i < n_points; i++) c[i] /= sum;
}

static void lanczos(double *c, int a, double shrink, double x) {
    const int n_points = 2 * rint(a * shrink) + 1;
    const double half = x + n_points / 2.0 - 1;
    double sum = 0;
    for (int i = 0; i < n_points; i++) {
        const double xp = (i - half) / shrink;
        double l;
        if (xp == 0.0) l = 1.0;
        else if (xp < -a) l = 0.0;
        else if (xp > a) l = 0.0;
        else l = (double)a * sin(VIPS_PI * xp) * sin(VIPS_PI * xp / (double)a) / (VIPS_PI * VIPS_PI * xp * xp);
        c[i] = l;
        sum += l;
    }
    for (int i = 0; i < n_points; i++) c[i] /= sum;
}

static void make_mask(double *c, VipsKernel kernel, double shrink, double x) {
    switch (kernel) {
    case VIPS_KERNEL_NEAREST: c[0] = 1.0; break;
    case VIPS_KERNEL_LINEAR: triangle(c, shrink, x); break;
    case VIPS_KERNEL_CUBIC: cubic(c, shrink, x, 0.0, 0.5); break;
    case VIPS_KERNEL_MITCHELL: cubic(c, shrink, x, 1.0 / 3.0, 1.0 / 3.0); break;
    case VIPS_KERNEL_LANCZOS2: lanczos(c, 2, shrink, x); break;
    default: lanczos(c, 3, shrink, x); break;
    }
}

static inline int32_t load32(const VipsPel *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

// libvips' own loop (reduceh_unsigned_int_tab), for pixels too near the end of a row to load
// four bytes at the last tap.
static void reduce_pixel(const VipsPel *p, int bands, const int *c, int n, VipsPel *q) {
    for (int z = 0; z < bands; z++) {
        int sum = 0;
        for (int i = 0; i < n; i++) sum += c[i] * p[z + i * bands];
        sum = (sum + (VIPS_INTERPOLATE_SCALE >> 1)) >> VIPS_INTERPOLATE_SHIFT;
        q[z] = (VipsPel)VIPS_CLIP(0, sum, UCHAR_MAX);
    }
}

#if defined(__SSE2__)
// The same sums with four 32-bit lanes, one a band: each step widens taps i and i + 1 of every
// band to 16 bits, interleaved, and pmaddwd multiplies them by (c[i], c[i + 1]) and adds the
// pairs. Integer sums do not depend on their order, so these are libvips' sums exactly.
static void reduce_pixel_sse2(const VipsPel *p, int bands, const __m128i *pairs, int n, VipsPel *q) {
    const __m128i zero = _mm_setzero_si128();
    __m128i sum = zero;
    int i = 0;
    for (; i + 1 < n; i += 2, p += 2 * bands) {
        __m128i a = _mm_cvtsi32_si128(load32(p)), b = _mm_cvtsi32_si128(load32(p + bands));
        sum = _mm_add_epi32(sum, _mm_madd_epi16(_mm_unpacklo_epi8(_mm_unpacklo_epi8(a, b), zero), pairs[i >> 1]));
    }
    if (i < n) {
        __m128i a = _mm_cvtsi32_si128(load32(p));
        sum = _mm_add_epi32(sum, _mm_madd_epi16(_mm_unpacklo_epi8(_mm_unpacklo_epi8(a, zero), zero), pairs[i >> 1]));
    }
    sum = _mm_srai_epi32(_mm_add_epi32(sum, _mm_set1_epi32(VIPS_INTERPOLATE_SCALE >> 1)), VIPS_INTERPOLATE_SHIFT);
    // Saturating packs clip to 0..255, as libvips' VIPS_CLIP does.
    int32_t bytes = _mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(sum, sum), zero));
    memcpy(q, &bytes, (size_t)bands);
}
#endif

// vips_reduceh_gen of 8.14, the 8-bit case, with the same coordinates.
static int reduce_generate(VipsRegion *out, void *sequence, void *a, void *b, gboolean *stop) {
    (void)stop;
    VipsRegion *ir = sequence;
    VipsImage *in = a;
    reduce_plan *plan = b;
    // Pairs with plan_new's release: libvips hands the work to its threads through GLib, which
    // ThreadSanitizer cannot see into (ph_colour_transforms.c does the same).
    (void)atomic_load_explicit(&plan->ready, memory_order_acquire);
    const VipsRect *r = &out->valid;
    const int bands = in->Bands, n = plan->n_point;
    VipsRect s;
    s.left = r->left * plan->hshrink - plan->hoffset;
    s.top = r->top;
    s.width = r->width * plan->hshrink + plan->n_point;
    s.height = r->height;
    if (vips_region_prepare(ir, &s)) return -1;
    for (int y = 0; y < r->height; y++) {
        VipsPel *q = VIPS_REGION_ADDR(out, r->left, r->top + y);
        double X = (r->left + 0.5) * plan->hshrink - 0.5 - plan->hoffset;
        const VipsPel *first = VIPS_REGION_ADDR(ir, ir->valid.left, r->top + y);
        const VipsPel *p0 = first - ir->valid.left * bands, *end = first + (size_t)ir->valid.width * bands;
        for (int x = 0; x < r->width; x++) {
            const int ix = (int)X;
            const VipsPel *p = p0 + ix * bands;
            const int sx = X * VIPS_TRANSFORM_SCALE * 2;
            const int six = sx & (VIPS_TRANSFORM_SCALE * 2 - 1);
            const int tx = (six + 1) >> 1;
#if defined(__SSE2__)
            if (p + (size_t)(n - 1) * bands + 4 <= end)
                reduce_pixel_sse2(p, bands, plan->pairs + (size_t)tx * ((n + 1) / 2), n, q);
            else
#endif
                reduce_pixel(p, bands, plan->matrixi + (size_t)tx * n, n, q);
            X += plan->hshrink;
            q += bands;
        }
    }
    return 0;
}

static void free_plan(VipsImage *image, reduce_plan *plan) {
    (void)image;
    g_free(plan->matrixi);
#if defined(__SSE2__)
    g_free(plan->pairs);
#endif
    g_free(plan);
}

// The coefficient tables for `n` taps, or NULL where a coefficient does not fit pmaddwd's 16
// bits (none does at a shrink of one or more: each is at most about 4096).
static reduce_plan *plan_new(VipsKernel kernel, double hshrink, double hoffset, int n) {
    reduce_plan *plan = g_new0(reduce_plan, 1);
    plan->hshrink = hshrink;
    plan->hoffset = hoffset;
    plan->n_point = n;
    plan->matrixi = g_new(int, (size_t)PHASES * n);
#if defined(__SSE2__)
    const int pairs = (n + 1) / 2;
    plan->pairs = g_new(__m128i, (size_t)PHASES * pairs); // glibc's malloc aligns to 16 on x86-64
#endif
    double *mask = g_new(double, n);
    int fits = 1;
    for (int x = 0; x < PHASES; x++) {
        int *c = plan->matrixi + (size_t)x * n;
        make_mask(mask, kernel, hshrink, (float)x / VIPS_TRANSFORM_SCALE);
        for (int i = 0; i < n; i++) {
            c[i] = mask[i] * VIPS_INTERPOLATE_SCALE;
            fits &= c[i] >= INT16_MIN && c[i] <= INT16_MAX;
        }
#if defined(__SSE2__)
        for (int k = 0; k < pairs; k++) {
            uint32_t low = (uint16_t)c[2 * k], high = 2 * k + 1 < n ? (uint16_t)c[2 * k + 1] : 0;
            plan->pairs[(size_t)x * pairs + k] = _mm_set1_epi32((int32_t)(low | high << 16));
        }
#endif
    }
    g_free(mask);
    if (!fits) {
        free_plan(NULL, plan);
        return NULL;
    }
    atomic_store_explicit(&plan->ready, 1, memory_order_release);
    return plan;
}

static void reduced_width(VipsImage *image, void *plan) { image->Xsize = ((reduce_plan *)plan)->width; }

// The reduce of `in` (already at its residual shrink) to `width`: 8.14's vips_reduceh_build
// from its mask on. 0 with *out made, 1 where libvips' own reduceh should do it, -1 on error.
static int reduce(VipsImage *in, VipsImage **out, double hshrink, VipsKernel kernel, int width, double extra_pixels) {
    if (hshrink == 1.0) return vips_copy(in, out, NULL);
    int n = points(kernel, hshrink);
    reduce_plan *plan;
    if (n < 1 || n > MAX_POINT || !(plan = plan_new(kernel, hshrink, (1 + extra_pixels) / 2.0 - 1, n))) return 1;
    // New pixels around the input, so the edges have all their taps.
    VipsImage *embedded;
    if (vips_embed(in, &embedded, VIPS_CEIL(n / 2.0) - 1, 0, in->Xsize + n, in->Ysize, "extend",
                   VIPS_EXTEND_COPY, NULL)) {
        free_plan(NULL, plan);
        return -1;
    }
    plan->width = width;
    int result = ph_generated_image(embedded, reduced_width, reduce_generate, plan, out);
    g_object_unref(embedded);
    if (result) {
        free_plan(NULL, plan);
        return -1;
    }
    // The plan goes when the image does.
    g_signal_connect(*out, "close", G_CALLBACK(free_plan), plan);
    vips_reorder_margin_hint(*out, n);
    atomic_fetch_add(&builds, 1);
    return 0;
}

// 8.14's vips_reduceh_build up to the mask, for the images this file takes: 1 for any other, or
// for anything libvips' reduceh refuses (so that its error is the one given).
static int build(VipsImage *in, VipsImage **out, double hshrink, VipsKernel kernel, double gap) {
    if (vips_version(0) != 8 || vips_version(1) != 14 || in->BandFmt != VIPS_FORMAT_UCHAR ||
        in->Coding != VIPS_CODING_NONE || in->Bands < 1 || in->Bands > 4 || hshrink < 1.0 ||
        (gap > 0.0 && gap < 1.0 && kernel != VIPS_KERNEL_NEAREST))
        return 1;
    // Round to nearest, as libvips does (round, not rint).
    int width = VIPS_ROUND_UINT((double)in->Xsize / hshrink);
    if (width <= 0) return 1;
    // How many pixels are invented in the input, negative where some are dropped.
    double extra_pixels = width * hshrink - in->Xsize;
    if (gap > 0.0 && kernel != VIPS_KERNEL_NEAREST) {
        int int_hshrink = VIPS_MAX(1, VIPS_FLOOR((double)in->Xsize / width / gap));
        if (int_hshrink > 1) {
            VipsImage *shrunk;
            if (vips_shrinkh(in, &shrunk, int_hshrink, "ceil", TRUE, NULL)) return -1;
            int result = reduce(shrunk, out, hshrink / int_hshrink, kernel, width, extra_pixels / int_hshrink);
            g_object_unref(shrunk);
            return result;
        }
    }
    return reduce(in, out, hshrink, kernel, width, extra_pixels);
}

// Reads the optional arguments libvips' reduceh takes: 0, or 1 for one this file does not know.
static int read_options(va_list options, VipsKernel *kernel, double *gap) {
    for (const char *name; (name = va_arg(options, const char *));) {
        if (strcmp(name, "kernel") == 0) *kernel = (VipsKernel)va_arg(options, int);
        else if (strcmp(name, "gap") == 0) *gap = va_arg(options, double);
        else if (strcmp(name, "centre") == 0) (void)va_arg(options, int); // deprecated: no effect in 8.14
        else return 1;
    }
    return 0;
}

int vips_reduceh(VipsImage *in, VipsImage **out, double hshrink, ...) {
    va_list ap, options;
    va_start(ap, hshrink);
    va_copy(options, ap);
    VipsKernel kernel = VIPS_KERNEL_LANCZOS3;
    double gap = 0.0;
    int result = 1;
    if (!ph_switched_off("PIPELINEHOST_REDUCEH", &switch_cache) && !read_options(options, &kernel, &gap))
        result = build(in, out, hshrink, kernel, gap);
    va_end(options);
    if (result == 1) result = vips_call_split("reduceh", ap, in, out, hshrink);
    va_end(ap);
    return result;
}

int ph_vips_reduceh(VipsImage *in, double hshrink, int kernel, double gap, VipsImage **out) {
    return vips_reduceh(in, out, hshrink, "kernel", (VipsKernel)kernel, "gap", gap, NULL);
}

// libvips' own vips_reduceh, word for word. (In a test program of libvips 8.14.1 alone,
// vips_call("reduceh", ...) with these arguments failed on some second calls, "reduce gap
// should be >= 1.0" with a gap of 0 or 2; vips_call_split, which vips_reduceh uses, never did.)
static int libvips_reduceh(VipsImage *in, VipsImage **out, double hshrink, ...) {
    va_list ap;
    va_start(ap, hshrink);
    int result = vips_call_split("reduceh", ap, in, out, hshrink);
    va_end(ap);
    return result;
}

int ph_vips_reduceh_libvips(VipsImage *in, double hshrink, int kernel, double gap, VipsImage **out) {
    return libvips_reduceh(in, out, hshrink, "kernel", (VipsKernel)kernel, "gap", gap, NULL);
}
