// A progressive JPEG decoded only as far as its output needs (issue 52).
//
// A progressive file arrives in scans: the DC coefficients, then bands and refinements of the
// AC ones. At DCT scale 1/8 libjpeg's 1x1 IDCT reads only DC, so for a 5K photo shown at 512 px
// most scans are decoded and thrown away. This reads scans in libjpeg's buffered-image mode
// until every coefficient the chosen IDCTs read is final (coef_bits 0), then runs one output
// pass. The pixels are those of the whole-file decode libvips' jpegload makes at that scale:
// the same library, upsampling and DCT method. Block smoothing is off here: it guesses the
// missing AC coefficients of a partial image, and in the whole-file decode there are none.
//
// Taken only at scale 1/8 (at 1/4 and 1/2 libjpeg-turbo's reduced IDCTs read AC coefficients
// that the standard scan script completes in its last scan; BENCHMARKS.md), for YCbCr and
// greyscale files that end in EOI. Anything else, and any libjpeg warning or error, returns 0
// and the caller takes the normal path, which decides as it always has: a truncated file is
// refused there. PIPELINEHOST_JPEG_EARLY_STOP=0 switches it off.
#include "ph_vips.h"

#include <jpeglib.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_long stopped_early;

long ph_jpeg_early_stops(void) { return atomic_load(&stopped_early); }

static int switched_off(void) {
    static atomic_int off = -1;
    if (atomic_load(&off) < 0) {
        const char *setting = g_getenv("PIPELINEHOST_JPEG_EARLY_STOP");
        atomic_store(&off, setting && strcmp(setting, "0") == 0);
    }
    return atomic_load(&off);
}

// The JPEG zigzag order: position k of a scan's spectral band is coefficient natural[k] of the
// block (row natural / 8, column natural % 8). coef_bits is indexed by k.
static const unsigned char natural[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

// Whether the IDCT of `size` x `size` output reads row (or column) `n` of the coefficients:
// 1x1 only DC; libjpeg-turbo's 2x2 (jidctred.c) rows 0, 1, 3, 5, 7; its 4x4 all but 4.
static int idct_reads(int size, int n) {
    switch (size) {
    case 1: return n == 0;
    case 2: return n == 0 || n == 1 || n == 3 || n == 5 || n == 7;
    case 4: return n != 4;
    default: return 1;
    }
}

// Every coefficient the output's IDCTs read is final. Chroma may be decoded at a larger IDCT
// than luma (libjpeg-turbo scales it up rather than upsampling), so each component has its own.
static int needed_scans_read(j_decompress_ptr cinfo) {
    if (!cinfo->coef_bits) return 0;
    for (int c = 0; c < cinfo->num_components; c++) {
        int size = cinfo->comp_info[c].DCT_scaled_size;
        for (int k = 0; k < 64; k++)
            if (idct_reads(size, natural[k] / 8) && idct_reads(size, natural[k] % 8) && cinfo->coef_bits[c][k] != 0)
                return 0;
    }
    return 1;
}

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} error_manager;

static void error_exit(j_common_ptr cinfo) { longjmp(((error_manager *)cinfo->err)->jump, 1); }

// Warnings (corrupt data, a premature end) are counted by libjpeg's own emit_message and end
// this path after the decode; messages are never printed.
static void output_message(j_common_ptr cinfo) { (void)cinfo; }

static int ends_in_eoi(const unsigned char *bytes, size_t length) {
    return length >= 4 && bytes[length - 2] == 0xFF && bytes[length - 1] == 0xD9;
}

// The header's fields and metadata (EXIF, ICC, XMP, resolution) as libvips' jpegload reads
// them, onto the decoded pixels.
static void *copy_field(VipsImage *from, const char *name, GValue *value, void *to) {
    static const char *const builtin[] = {"width",          "height", "bands",   "format",
                                          "coding",         "interpretation", "xoffset", "yoffset",
                                          "xres",           "yres",   "filename", NULL};
    (void)from;
    for (int i = 0; builtin[i]; i++)
        if (strcmp(name, builtin[i]) == 0) return NULL;
    vips_image_set((VipsImage *)to, name, value);
    return NULL;
}

// Decodes into `pixels` (output_height rows of output_width * components bytes). Returns 1 when
// it stopped before the last scan; 0 when it read them all; -1 on a libjpeg error or warning.
static int decode(struct jpeg_decompress_struct *cinfo, error_manager *errors, unsigned char *pixels) {
    if (setjmp(errors->jump)) return -1;
    jpeg_start_decompress(cinfo);
    int early = 0;
    for (;;) {
        int status = jpeg_consume_input(cinfo);
        if (status == JPEG_SUSPENDED) return -1;
        if (status == JPEG_REACHED_EOI) break;
        if (status == JPEG_SCAN_COMPLETED && needed_scans_read(cinfo)) {
            early = !jpeg_input_complete(cinfo);
            break;
        }
    }
    jpeg_start_output(cinfo, cinfo->input_scan_number);
    size_t row = (size_t)cinfo->output_width * (size_t)cinfo->output_components;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW line = pixels + row * cinfo->output_scanline;
        jpeg_read_scanlines(cinfo, &line, 1);
    }
    return errors->pub.num_warnings ? -1 : early;
}

int ph_jpeg_load_whole(const void *buffer, size_t length, int shrink, VipsImage **out) {
    return vips_jpegload_buffer((void *)buffer, length, out, "shrink", shrink, "fail_on", VIPS_FAIL_ON_TRUNCATED,
                                "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

int ph_jpeg_load_needed_scans(const void *buffer, size_t length, int shrink, VipsImage **out) {
    if (shrink != 8 || switched_off() || !ends_in_eoi(buffer, length)) return 0;
    struct jpeg_decompress_struct cinfo;
    error_manager errors;
    memset(&cinfo, 0, sizeof cinfo);  // so that jpeg_destroy_decompress is safe from any point
    cinfo.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = error_exit;
    errors.pub.output_message = output_message;
    unsigned char *volatile pixels = NULL;
    VipsImage *volatile header = NULL;
    int taken = 0;
    if (setjmp(errors.jump)) goto done;
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, buffer, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    int colours_kept = (cinfo.jpeg_color_space == JCS_YCbCr && cinfo.out_color_space == JCS_RGB) ||
                       (cinfo.jpeg_color_space == JCS_GRAYSCALE && cinfo.out_color_space == JCS_GRAYSCALE);
    if (!cinfo.progressive_mode || !colours_kept) goto done;
    cinfo.scale_num = 1;
    cinfo.scale_denom = 8;
    cinfo.buffered_image = TRUE;
    cinfo.do_block_smoothing = FALSE;
    jpeg_calc_output_dimensions(&cinfo);
    // libvips' header for the same scale: its size must be ours, and its metadata is copied.
    VipsImage *loaded;
    if (ph_jpeg_load_whole(buffer, length, 8, &loaded)) {
        vips_error_clear();
        goto done;
    }
    header = loaded;
    if (header->Xsize != (int)cinfo.output_width || header->Ysize != (int)cinfo.output_height ||
        header->Bands != cinfo.output_components || header->BandFmt != VIPS_FORMAT_UCHAR)
        goto done;
    size_t bytes = (size_t)cinfo.output_width * cinfo.output_height * (size_t)cinfo.output_components;
    if (!(pixels = malloc(bytes))) goto done;
    int early = decode(&cinfo, &errors, pixels);
    if (early < 0) goto done;
    VipsImage *image = vips_image_new_from_memory_copy(pixels, bytes, header->Xsize, header->Ysize,
                                                       header->Bands, VIPS_FORMAT_UCHAR);
    if (!image) {
        vips_error_clear();
        goto done;
    }
    image->Type = header->Type;
    image->Xres = header->Xres;
    image->Yres = header->Yres;
    vips_image_map(header, copy_field, image);
    if (early) atomic_fetch_add(&stopped_early, 1);
    *out = image;
    taken = 1;
done:
    jpeg_destroy_decompress(&cinfo);
    free(pixels);
    if (header) g_object_unref(header);
    return taken;
}
