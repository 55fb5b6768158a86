// What a GIF's blocks say about its frames, read without decoding a pixel:
// - the colour table each frame is drawn from, so that a GIF made from a GIF can keep the
//   source's palettes (ph_gif_save.c) as gifsicle does when it resizes, instead of quantizing
//   every frame afresh;
// - whether every frame, once composed, is opaque (or is if the first frame is), so that its
//   alpha can be dropped before a resize (libvips' GIF loader gives four bands whenever a frame
//   has a transparent index, which encoders use to skip unchanged pixels, and resizes four
//   bands premultiplied, in floats).
//
// A frame's table need not hold every colour the frame shows once composed: where it has a
// transparent index or covers part of the screen, the frames before show through, and their
// colours may be in other tables. So the writer measures each frame's mapping to its table
// (ph_gif_map_to_palette) and quantizes afresh where it is not close.
#include "ph_vips.h"

#include <string.h>

typedef struct {
    const unsigned char *at, *end;
    const unsigned char *global; // the global colour table, or NULL
    int global_entries;
    unsigned screen_width, screen_height;
} gif_walk;

typedef struct {
    const unsigned char *table; // the frame's colour table: its own, else the global one, or NULL
    int entries;
    int transparent; // the transparent index, or -1
    int disposal;    // what is done with the frame before the next is drawn: 0-1 nothing, 2 clear, 3 restore
    unsigned left, top, width, height;
} gif_frame;

static int has(const gif_walk *w, size_t n) { return (size_t)(w->end - w->at) >= n; }

static unsigned little16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

// Skips a run of data sub-blocks up to and past its terminator.
static int skip_sub_blocks(gif_walk *w) {
    while (has(w, 1)) {
        size_t size = *w->at++;
        if (size == 0) return 0;
        if (!has(w, size)) return -1;
        w->at += size;
    }
    return -1;
}

// Reads a colour table of 2^(bits + 1) entries.
static int read_table(gif_walk *w, int bits, const unsigned char **table, int *entries) {
    *entries = 1 << (bits + 1);
    if (!has(w, (size_t)*entries * 3)) return -1;
    *table = w->at;
    w->at += (size_t)*entries * 3;
    return 0;
}

// Reads the header and the global colour table: 0, or -1 for anything but a GIF.
static int start(gif_walk *w, const void *buffer, size_t length) {
    *w = (gif_walk){buffer, (const unsigned char *)buffer + length, NULL, 0, 0, 0};
    if (!has(w, 13) || (memcmp(w->at, "GIF87a", 6) && memcmp(w->at, "GIF89a", 6))) return -1;
    w->screen_width = little16(w->at + 6);
    w->screen_height = little16(w->at + 8);
    int packed = w->at[10];
    w->at += 13;
    return packed & 0x80 ? read_table(w, packed & 7, &w->global, &w->global_entries) : 0;
}

// Reads the next frame with its image data: 1, or 0 at the trailer, 2 at damage.
static int next_frame(gif_walk *w, gif_frame *f) {
    *f = (gif_frame){w->global, w->global_entries, -1, 0, 0, 0, 0, 0};
    while (has(w, 1)) {
        int block = *w->at++;
        if (block == 0x3B) return 0;
        if (block == 0x21) {
            if (!has(w, 1)) return 2;
            int label = *w->at++;
            // A graphic control extension: the next frame's disposal and transparent index.
            if (label == 0xF9 && has(w, 5) && w->at[0] >= 4) {
                f->disposal = w->at[1] >> 2 & 7;
                f->transparent = w->at[1] & 1 ? w->at[4] : -1;
            }
            if (skip_sub_blocks(w)) return 2;
            continue;
        }
        if (block != 0x2C || !has(w, 9)) return 2;
        f->left = little16(w->at);
        f->top = little16(w->at + 2);
        f->width = little16(w->at + 4);
        f->height = little16(w->at + 6);
        int flags = w->at[8];
        w->at += 9;
        if (flags & 0x80 && read_table(w, flags & 7, &f->table, &f->entries)) return 2;
        // The LZW minimum code size, then the image data.
        if (!has(w, 1)) return 2;
        w->at++;
        return skip_sub_blocks(w) ? 2 : 1;
    }
    return 2;
}

// A frame drawn past the screen, where a loader may grow the canvas.
static int past_screen(const gif_walk *w, const gif_frame *f) {
    return f->left + f->width > w->screen_width || f->top + f->height > w->screen_height;
}

// The first frame covers the screen without a hole, and no frame is cleared to the background,
// restored or drawn past the screen (where a loader may grow the canvas): every later hole
// shows an opaque frame before. 1 if so, 0 if not, and PH_GIF_OPAQUE_IF_FIRST_IS where the first
// frame has a transparent index, which only its pixels can say it uses (ffmpeg gives every frame
// one, the first included, though the first has no hole).
static int keeps_opaque(const gif_walk *w, const gif_frame *f, int first) {
    if (first && (f->left || f->top || f->width != w->screen_width || f->height != w->screen_height)) return 0;
    if (f->disposal > 1 || past_screen(w, f)) return 0;
    return first && f->transparent >= 0 ? PH_GIF_OPAQUE_IF_FIRST_IS : 1;
}

int ph_gif_read_palettes(const void *buffer, size_t length, ph_gif_palette *out, int max_frames, int *opaque) {
    gif_walk w;
    gif_frame f;
    int frames = 0, read = 0, solid = 1;
    if (opaque) *opaque = 0;
    if (start(&w, buffer, length)) return 0;
    while (frames < max_frames && (read = next_frame(&w, &f)) == 1) {
        int keeps = keeps_opaque(&w, &f, frames == 0);
        solid = frames == 0 || !keeps ? keeps : solid; // the first frame's answer, unless a later one says no
        ph_gif_palette *palette = &out[frames++];
        palette->colours = 0;
        for (int i = 0; f.table && i < f.entries; i++) {
            if (i == f.transparent) continue;
            memcpy(palette->rgb + palette->colours * 3, f.table + i * 3, 3);
            palette->colours++;
        }
    }
    // A damaged file says nothing of the frames it lost.
    if (opaque) *opaque = frames > 0 && read != 2 ? solid : 0;
    return frames;
}

int ph_gif_read_changes(const void *buffer, size_t length, VipsRect *out, int max_frames) {
    gif_walk w;
    gif_frame f;
    int frames = 0, read = 0, before_disposal = 0;
    VipsRect before = {0, 0, 0, 0};
    if (start(&w, buffer, length) || w.screen_width == 0 || w.screen_height == 0) return 0;
    VipsRect screen = {0, 0, (int)w.screen_width, (int)w.screen_height};
    while (frames < max_frames && (read = next_frame(&w, &f)) == 1) {
        // A frame drawn past the screen may grow the loader's canvas: what changed is not known.
        if (past_screen(&w, &f)) return 0;
        VipsRect drawn = {(int)f.left, (int)f.top, (int)f.width, (int)f.height};
        // Cleared or restored (disposal 2, 3, or a value past those), the frame before changes
        // its own box back.
        if (frames == 0)
            out[0] = screen;
        else if (before_disposal > 1)
            vips_rect_unionrect(&drawn, &before, &out[frames]);
        else
            out[frames] = drawn;
        before = drawn;
        before_disposal = f.disposal;
        frames++;
    }
    return read == 2 ? 0 : frames;
}
