// Embedded ICC profile to sRGB, with each colour transform built once per distinct profile.
//
// libvips' icc_transform builds an lcms2 transform for every image: about 6 ms of CPU for a
// 2040 px photo's Display P3 profile, most of it inverting sRGB's tone curves
// (cmsReverseToneCurveEx), a tenth of a 512 px answer's cost (BENCHMARKS.md). Photos from one
// camera or editor carry the same few profiles, so the transforms are kept here, keyed by the
// profile's bytes (compared whole, never only a hash), and shared by every image with that
// profile.
//
// The pixels are libvips' own: the same lcms2 call with the same profiles, formats, intent and
// flags (cmsFLAGS_NOCACHE, which also makes one transform safe on several threads at once), line
// by line as libvips' colour classes do. Only the common case takes this path: 3-band 8-bit RGB
// with an RGB profile. Anything else (alpha, CMYK, grey, 16 bits, a profile lcms2 refuses) goes
// to vips_icc_transform as before. PIPELINEHOST_COLOUR_TRANSFORM_CACHE=0 sends every image there.
#include "ph_internal.h"
#include "ph_vips.h"

#include <lcms2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// Sixteen profiles cover a photo library's cameras and editors; a transform is a few hundred KB.
enum { kept_transforms = 16, largest_kept_profile = 256 << 10 };

typedef struct {
    void *profile;  // the profile's bytes
    size_t length;
    cmsHTRANSFORM transform;
    atomic_int references;  // the table's, and one per image that uses it
    unsigned long last_used;
    int uses;  // images handed this transform (under the lock)
} kept_transform;

// A pthread mutex, not a GMutex: ThreadSanitizer sees it.
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_transform *table[kept_transforms];
static unsigned long clock_tick;
static cmsHPROFILE srgb_profile;
static VipsBlob *srgb_blob;

int ph_vips_colour_transform_uses(const void *profile, size_t length) {
    pthread_mutex_lock(&table_lock);
    int uses = -1;
    for (int i = 0; i < kept_transforms && uses < 0; i++)
        if (table[i] && table[i]->length == length && memcmp(table[i]->profile, profile, length) == 0)
            uses = table[i]->uses;
    pthread_mutex_unlock(&table_lock);
    return uses;
}

static void release(kept_transform *kept) {
    if (atomic_fetch_sub(&kept->references, 1) != 1) return;
    cmsDeleteTransform(kept->transform);
    free(kept->profile);
    free(kept);
}

static void release_on_close(VipsImage *image, kept_transform *kept) {
    (void)image;
    release(kept);
}

// The sRGB profile libvips attaches after its own transform; built once, under the lock.
static int load_srgb(void) {
    if (srgb_profile) return 0;
    if (vips_profile_load("srgb", &srgb_blob, NULL)) return -1;
    size_t length;
    const void *data = vips_blob_get(srgb_blob, &length);
    srgb_profile = cmsOpenProfileFromMem(data, (cmsUInt32Number)length);
    return srgb_profile ? 0 : -1;
}

// The transform for this profile, with a reference for the caller; NULL when lcms2 cannot make
// one (the caller then leaves the image to libvips, which decides what a bad profile means).
static kept_transform *transform_for(const void *profile, size_t length) {
    pthread_mutex_lock(&table_lock);
    kept_transform *found = NULL;
    int free_slot = -1, oldest = 0;
    for (int i = 0; i < kept_transforms; i++) {
        kept_transform *kept = table[i];
        if (!kept) {
            if (free_slot < 0) free_slot = i;
            continue;
        }
        if (kept->length == length && memcmp(kept->profile, profile, length) == 0) {
            found = kept;
            break;
        }
        if (table[oldest] == NULL || kept->last_used < table[oldest]->last_used) oldest = i;
    }
    if (!found && load_srgb() == 0) {
        cmsHPROFILE input = cmsOpenProfileFromMem(profile, (cmsUInt32Number)length);
        cmsHTRANSFORM transform = NULL;
        if (input && cmsGetColorSpace(input) == cmsSigRgbData)
            transform = cmsCreateTransform(input, TYPE_RGB_8, srgb_profile, TYPE_RGB_8,
                                           INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
        if (input) cmsCloseProfile(input);
        void *copy = transform ? malloc(length) : NULL;
        found = copy ? calloc(1, sizeof *found) : NULL;
        if (found) {
            memcpy(copy, profile, length);
            *found = (kept_transform){copy, length, transform, 1, 0, 0};
            int slot = free_slot >= 0 ? free_slot : oldest;
            if (table[slot]) release(table[slot]);
            table[slot] = found;
        } else {
            free(copy);
            if (transform) cmsDeleteTransform(transform);
        }
    }
    if (found) {
        found->last_used = ++clock_tick;
        found->uses++;
        atomic_fetch_add(&found->references, 1);
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

static int transform_generate(VipsRegion *out, void *sequence, void *a, void *b, gboolean *stop) {
    VipsRegion *input = (VipsRegion *)sequence;
    kept_transform *kept = (kept_transform *)b;
    (void)a;
    (void)stop;
    // Pairs with the reference the caller took after the entry was written: libvips hands the
    // work to its threads in ways ThreadSanitizer cannot see (ph_vips.c's watch does the same).
    (void)atomic_load_explicit(&kept->references, memory_order_acquire);
    VipsRect *area = &out->valid;
    if (vips_region_prepare(input, area)) return -1;
    for (int y = 0; y < area->height; y++)
        cmsDoTransform(kept->transform, VIPS_REGION_ADDR(input, area->left, area->top + y),
                       VIPS_REGION_ADDR(out, area->left, area->top + y), (cmsUInt32Number)area->width);
    return 0;
}

static atomic_int switch_cache = -1;

// The transformed image's fields: sRGB, with libvips' own sRGB profile.
static void as_srgb(VipsImage *image, void *state) {
    (void)state;
    image->Type = VIPS_INTERPRETATION_sRGB;
    size_t srgb_length;
    const void *srgb = vips_blob_get(srgb_blob, &srgb_length);
    vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, srgb, srgb_length);
}

int ph_vips_icc_to_srgb_kept(VipsImage *in, VipsImage **out) {
    const void *profile;
    size_t length;
    if (ph_switched_off("PIPELINEHOST_COLOUR_TRANSFORM_CACHE", &switch_cache) || in->Bands != 3 ||
        in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE ||
        (in->Type != VIPS_INTERPRETATION_sRGB && in->Type != VIPS_INTERPRETATION_RGB) ||
        vips_image_get_blob(in, VIPS_META_ICC_NAME, &profile, &length) || length > largest_kept_profile)
        return 1;
    kept_transform *kept = transform_for(profile, length);
    if (!kept) {
        vips_error_clear();
        return 1;
    }
    // The pixels come from `in` for as long as the image lives; the transform is given back
    // when the image closes.
    if (ph_generated_image(in, as_srgb, transform_generate, kept, out)) {
        release(kept);
        return -1;
    }
    g_signal_connect(*out, "postclose", G_CALLBACK(release_on_close), kept);
    return 0;
}
