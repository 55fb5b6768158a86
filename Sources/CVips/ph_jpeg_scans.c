// A progressive JPEG decoded only as far as its output needs (issue 52).
//
// A progressive file arrives in scans: the DC coefficients of every component, then bands and
// refinements of each component's AC coefficients, one component per AC scan. At DCT scale 1/8
// libjpeg's 1x1 IDCT reads only DC, so for a 5K photo shown at 512 px most of the file is
// entropy-decoded and thrown away. Here the file is copied without the AC scans of every
// component whose IDCT at that scale reads DC alone (its DCT_scaled_size is 1: luma, and chroma
// unless it is subsampled, which libjpeg-turbo then scales up by IDCT instead), and libjpeg
// decodes the copy. A component keeps all its scans or loses all its AC scans, so no refinement
// scan is read without the scans it refines. The coefficients each IDCT reads are those of the
// whole file, so the pixels are those of libvips' whole-file decode at that scale: the same
// library, upsampling and DCT method. Block smoothing is off here: it would guess the AC
// coefficients left out, and in the whole-file decode there are none to guess.
//
// Taken only at scale 1/8 (at 1/4 and 1/2 every component's IDCT reads AC coefficients), for
// YCbCr and greyscale files that end in EOI. Anything else (an unexpected marker layout, any
// libjpeg warning) returns 0 and the caller takes the normal path, which decides as it always
// has: a truncated file is refused there. PIPELINEHOST_JPEG_EARLY_STOP=0 switches it off.
#include "ph_internal.h"
#include "ph_vips.h"

#include <jpeglib.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_long stopped_early;
static atomic_int switch_cache = -1;

long ph_jpeg_early_stops(void) { return atomic_load(&stopped_early); }

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

// Whether component `id`'s IDCT reads DC alone at the scale set (it keeps no AC scan then).
static int reads_dc_only(j_decompress_ptr cinfo, int id) {
    for (int c = 0; c < cinfo->num_components; c++)
        if (cinfo->comp_info[c].component_id == id) return cinfo->comp_info[c].DCT_scaled_size == 1;
    return 0;
}

// Where a scan's entropy-coded data ends: at the next marker that is neither a stuffed zero
// (FF 00) nor a restart marker (FF D0 to FF D7). `length` when there is none.
static size_t scan_end(const unsigned char *bytes, size_t at, size_t length) {
    while (at + 1 < length) {
        const unsigned char *mark = memchr(bytes + at, 0xFF, length - 1 - at);
        if (!mark) return length;
        size_t i = (size_t)(mark - bytes);
        unsigned char next = bytes[i + 1];
        if (next != 0x00 && next != 0xFF && (next < 0xD0 || next > 0xD7)) return i;
        at = i + 1;
    }
    return length;
}

// The file without the AC scans of components that read DC alone, into `out` (at least
// `length` bytes). Returns the copy's length, or 0 when the file's markers are not laid out as
// expected (then the normal path reads it). `*dropped` counts the scans left out.
static size_t without_unread_scans(j_decompress_ptr cinfo, const unsigned char *bytes, size_t length,
                                   unsigned char *out, int *dropped) {
    if (length < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8) return 0;
    memcpy(out, bytes, 2);
    size_t kept = 2, at = 2;
    *dropped = 0;
    for (;;) {
        if (at >= length || bytes[at] != 0xFF) return 0;
        size_t start = at;
        while (at < length && bytes[at] == 0xFF) at++;  // fill bytes before a marker
        if (at + 1 > length) return 0;
        unsigned char marker = bytes[at++];
        if (marker == 0xD9) {  // EOI
            memcpy(out + kept, bytes + start, at - start);
            return kept + (at - start);
        }
        if (marker == 0x00 || (marker >= 0xD0 && marker <= 0xD8) || at + 2 > length) return 0;
        size_t segment = ((size_t)bytes[at] << 8) | bytes[at + 1];
        if (segment < 2 || segment > length - at) return 0;
        size_t end = at + segment;
        int keep = 1;
        if (marker == 0xDA) {  // SOS: Ns, then Ns (Cs, Td/Ta), then Ss, Se, Ah/Al; then the data
            int components = segment >= 3 ? bytes[at + 2] : 0;
            if (components < 1 || segment != 6 + 2 * (size_t)components) return 0;
            int spectral_start = bytes[at + 3 + 2 * components];
            keep = !(spectral_start > 0 && components == 1 && reads_dc_only(cinfo, bytes[at + 3]));
            end = scan_end(bytes, end, length);
        }
        if (keep) {
            memcpy(out + kept, bytes + start, end - start);
            kept += end - start;
        } else {
            (*dropped)++;
        }
        at = end;
    }
}

// Decodes the copy into `pixels` (output_height rows of output_width * components bytes), at the
// size the original's header gave. Returns 0, or -1 on a libjpeg error or warning.
static int decode(struct jpeg_decompress_struct *cinfo, error_manager *errors, const unsigned char *copy,
                  size_t length, unsigned char *pixels) {
    JDIMENSION width = cinfo->output_width, height = cinfo->output_height;
    if (setjmp(errors->jump)) return -1;
    jpeg_abort_decompress(cinfo);
    jpeg_mem_src(cinfo, copy, (unsigned long)length);
    jpeg_read_header(cinfo, TRUE);
    cinfo->scale_num = 1;
    cinfo->scale_denom = 8;
    cinfo->do_block_smoothing = FALSE;
    jpeg_start_decompress(cinfo);
    if (cinfo->output_width != width || cinfo->output_height != height) return -1;
    size_t row = (size_t)width * (size_t)cinfo->output_components;
    while (cinfo->output_scanline < height) {
        JSAMPROW line = pixels + row * cinfo->output_scanline;
        jpeg_read_scanlines(cinfo, &line, 1);
    }
    return errors->pub.num_warnings ? -1 : 0;
}

int ph_jpeg_load_whole(const void *buffer, size_t length, int shrink, VipsImage **out) {
    return vips_jpegload_buffer((void *)buffer, length, out, "shrink", shrink, "fail_on", VIPS_FAIL_ON_TRUNCATED,
                                "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

int ph_jpeg_load_needed_scans(const void *buffer, size_t length, int shrink, VipsImage **out) {
    if (shrink != 8 || ph_switched_off("PIPELINEHOST_JPEG_EARLY_STOP", &switch_cache) || !ends_in_eoi(buffer, length))
        return 0;
    struct jpeg_decompress_struct cinfo;
    error_manager errors;
    memset(&cinfo, 0, sizeof cinfo);  // so that jpeg_destroy_decompress is safe from any point
    cinfo.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = error_exit;
    errors.pub.output_message = output_message;
    unsigned char *volatile pixels = NULL;
    unsigned char *volatile copy = NULL;
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
    jpeg_calc_output_dimensions(&cinfo);
    int dropped;
    size_t copied;
    if (!(copy = malloc(length)) || !(copied = without_unread_scans(&cinfo, buffer, length, copy, &dropped)) ||
        dropped == 0)
        goto done;
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
    if (decode(&cinfo, &errors, copy, copied, pixels)) goto done;
    VipsImage *image = vips_image_new_from_memory_copy(pixels, bytes, header->Xsize, header->Ysize,
                                                       header->Bands, VIPS_FORMAT_UCHAR);
    if (!image) {
        vips_error_clear();
        goto done;
    }
    ph_copy_header_fields(header, image);
    atomic_fetch_add(&stopped_early, 1);
    *out = image;
    taken = 1;
done:
    jpeg_destroy_decompress(&cinfo);
    free(pixels);
    free(copy);
    if (header) g_object_unref(header);
    return taken;
}
