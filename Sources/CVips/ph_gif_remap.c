// A GIF frame mapped to its source frame's palette (ph_gif_palettes.c), as gifsicle maps the
// frames it resizes: the nearest colour, no dithering. ph_gif_save.c keeps the mapping only
// where it is close, and quantizes the frame afresh otherwise. And a frame of few colours given
// exactly those (ph_gif_exact_palette), which no mapping or quantization can better.
#include "ph_internal.h"
#include "ph_vips.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// How close a kept palette must be. Over the frame's opaque pixels: a mean squared error a
// channel of at most the caller's limit (ph_gif_save.c gives 6.5, 40 dB, or what libimagequant
// did on a frame like it where that is more), and no more than one pixel in a thousand further
// than 48 from the colour it gets (a mark or a caption in colours the source lacks would show).
// Otherwise the frame is quantized afresh.
#define FAR_SQUARED (48 * 48)
#define FAR_PER_THOUSAND 1

typedef ph_gif_entry entry;

// Recent answers: a resized frame repeats most of its colours. At most 4096 slots, and no more
// than twice the pixels: a recording's changed box of a few hundred pixels is mapped a frame at
// a time, and clearing 36 KB for each cost more than its search.
#define CACHE_BITS 12
typedef struct {
    uint32_t key;  // rgb + 1; 0 is empty
    int distance;
    VipsPel answer;
} answer;

static int squared(const VipsPel *p, const unsigned char *rgb) {
    return (p[0] - rgb[0]) * (p[0] - rgb[0]) + (p[1] - rgb[1]) * (p[1] - rgb[1]) + (p[2] - rgb[2]) * (p[2] - rgb[2]);
}

// Whether a mapping's summed squared error and far pixels are over what `opaque` pixels allow.
static int too_far(double error, double limit, size_t far, size_t opaque) {
    return error > limit * 3 * (double)opaque || far * 1000 > opaque * FAR_PER_THOUSAND;
}

static int by_green(const void *a, const void *b) { return ((const entry *)a)->g - ((const entry *)b)->g; }

// The nearest of `count` entries sorted by green, searched outwards from green `g` until the
// green difference alone is further than the best found.
static VipsPel nearest(const entry *sorted, int count, const int *first, const VipsPel *p, int *distance) {
    int best = INT_MAX, choice = 0;
    for (int up = first[p[1]], down = up - 1; up < count || down >= 0;) {
        if (up < count) {
            const entry *e = &sorted[up++];
            int dg = e->g - p[1], d = (e->r - p[0]) * (e->r - p[0]) + dg * dg + (e->b - p[2]) * (e->b - p[2]);
            if (dg * dg >= best) up = count;
            else if (d < best) best = d, choice = e->index;
        }
        if (down >= 0) {
            const entry *e = &sorted[down--];
            int dg = p[1] - e->g, d = (e->r - p[0]) * (e->r - p[0]) + dg * dg + (e->b - p[2]) * (e->b - p[2]);
            if (dg * dg >= best) down = -1;
            else if (d < best) best = d, choice = e->index;
        }
    }
    *distance = best;
    return (VipsPel)choice;
}

void ph_gif_nearest_prepare(ph_gif_nearest *nearest, const unsigned char *rgb, int colours, int skip) {
    int kept = 0;
    for (int i = 0; i < VIPS_CLIP(0, colours, 256); i++)
        if (i != skip) nearest->sorted[kept++] = (entry){rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], i};
    qsort(nearest->sorted, (size_t)kept, sizeof(entry), by_green);
    for (int g = 0, k = 0; g < 256; g++) {
        while (k < kept && nearest->sorted[k].g < g) k++;
        nearest->first[g] = k;
    }
    nearest->count = kept;
}

// Maps the opaque ones of `n` RGBA pixels to their nearest entry of `table` into `index`,
// counting in `used` the pixels each entry is given and in `error` and `far` their summed squared
// error and far pixels. Returns 0, early, once the mapping is too far for `limit` (too_far).
static int map_nearest(const ph_gif_nearest *table, const unsigned char *rgba, size_t n, double limit,
                       unsigned char *index, size_t *used, double *error, size_t *far) {
    if (table->count == 0) return 0;
    // The error and the far pixels only grow, so a frame is given up as soon as they pass what
    // its opaque pixels allow: a frame that does not fit (a photo pan's dithered palette, resized)
    // costs a fraction of the search.
    size_t opaque = 0;
    const VipsPel *p = rgba;
    for (size_t i = 0; i < n; i++, p += 4) opaque += p[3] != 0;
    int bits = 8;
    while (bits < CACHE_BITS && ((size_t)1 << bits) < 2 * n) bits++;
    answer *cache = g_try_malloc0(sizeof(answer) << bits);
    if (!cache) return 0;
    *error = 0;
    *far = 0;
    p = rgba;
    for (size_t i = 0; i < n; i++, p += 4) {
        if (!p[3]) continue;
        uint32_t key = ((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) + 1;
        answer *a = &cache[(key * 2654435761u) >> (32 - bits)];
        if (a->key != key) {
            a->key = key;
            a->answer = nearest(table->sorted, table->count, table->first, p, &a->distance);
        }
        index[i] = a->answer;
        used[index[i]]++;
        *error += a->distance;
        *far += a->distance > FAR_SQUARED;
        if (too_far(*error, limit, *far, opaque)) break;
    }
    g_free(cache);
    return !too_far(*error, limit, *far, opaque);
}

int ph_gif_map_to_palette(const ph_gif_palette *source, const unsigned char *rgba, size_t n, double limit,
                          unsigned char *index, unsigned char *palette, int *colours, int *transparent) {
    int count = VIPS_CLIP(0, source->colours, 256);
    size_t used[256] = {0}; // pixels given each entry
    double error;
    size_t far, opaque = 0;
    ph_gif_nearest table;
    ph_gif_nearest_prepare(&table, source->rgb, count, -1);
    if (!map_nearest(&table, rgba, n, limit, index, used, &error, &far)) return 0;
    const VipsPel *p = rgba;
    for (size_t i = 0; i < n; i++, p += 4) opaque += p[3] != 0;
    // A transparent entry: past the source's colours, or one no pixel of this frame uses, or
    // else the least used, its pixels given their next nearest colour.
    int spare = count;
    if (count == 256) {
        spare = 0;
        for (int i = 1; i < 256; i++)
            if (used[i] < used[spare]) spare = i;
        if (used[spare]) {
            p = rgba;
            for (size_t i = 0; i < n; i++, p += 4) {
                if (!p[3] || index[i] != spare) continue;
                int before = squared(p, source->rgb + spare * 3), best = INT_MAX;
                for (int e = 0; e < 256; e++) {
                    int d = squared(p, source->rgb + e * 3);
                    if (e != spare && d < best) best = d, index[i] = (VipsPel)e;
                }
                error += best - before;
                far += (best > FAR_SQUARED) - (before > FAR_SQUARED);
            }
        }
    }
    if (too_far(error, limit, far, opaque)) return 0;
    memcpy(palette, source->rgb, (size_t)count * 3);
    memset(palette + spare * 3, 0, 3);
    *colours = VIPS_MAX(count, spare + 1);
    *transparent = spare;
    p = rgba;
    for (size_t i = 0; i < n; i++, p += 4)
        if (!p[3]) index[i] = (VipsPel)spare;
    return 1;
}

int ph_gif_map_to_table(const ph_gif_nearest *table, int transparent, const unsigned char *rgba, size_t n,
                        double limit, unsigned char *index) {
    size_t used[256] = {0};
    double error;
    size_t far;
    if (!map_nearest(table, rgba, n, limit, index, used, &error, &far)) return 0;
    const VipsPel *p = rgba;
    for (size_t i = 0; i < n; i++, p += 4)
        if (!p[3]) index[i] = (VipsPel)transparent;
    return 1;
}

// Open addressing in 1024 slots: at most 255 colours keep it a quarter full.
#define EXACT_SLOTS 1024

int ph_gif_exact_palette(const unsigned char *rgba, size_t n, unsigned char *index, unsigned char *palette,
                         int *colours, int *transparent) {
    uint32_t key[EXACT_SLOTS] = {0}; // rgb + 1; 0 is empty
    VipsPel entry[EXACT_SLOTS];
    int count = 0;
    const VipsPel *p = rgba;
    for (size_t i = 0; i < n; i++, p += 4) {
        if (!p[3]) continue;
        uint32_t k = ((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) + 1;
        uint32_t slot = (k * 2654435761u) >> 22;
        while (key[slot] && key[slot] != k) slot = (slot + 1) % EXACT_SLOTS;
        if (!key[slot]) {
            if (count == 255) return 0;
            key[slot] = k;
            entry[slot] = (VipsPel)count;
            memcpy(palette + count * 3, p, 3);
            count++;
        }
        index[i] = entry[slot];
    }
    // GIF's smallest table has two entries.
    memset(palette + count * 3, 0, (size_t)(count == 0 ? 6 : 3));
    *transparent = count;
    *colours = VIPS_MAX(count + 1, 2);
    p = rgba;
    for (size_t i = 0; i < n; i++, p += 4)
        if (!p[3]) index[i] = (VipsPel)count;
    return 1;
}
