// Metadata as text and small RGBA copies, for info and the placeholder stage.
#include "ph_vips_info.h"
#include <string.h>

char *ph_vips_field_string(VipsImage *image, const char *name) {
    if (!vips_image_get_typeof(image, name)) return NULL;
    char *text = NULL;
    if (vips_image_get_as_string(image, name, &text)) return NULL;
    return text;
}

int ph_vips_field_int(VipsImage *image, const char *name, int fallback) {
    int value;
    if (vips_image_get_typeof(image, name) != G_TYPE_INT || vips_image_get_int(image, name, &value)) return fallback;
    return value;
}

long ph_vips_field_ints_sum(VipsImage *image, const char *name, int *count) {
    int *values, n = 0;
    long sum = 0;
    *count = 0;
    if (vips_image_get_typeof(image, name) != VIPS_TYPE_ARRAY_INT || vips_image_get_array_int(image, name, &values, &n))
        return 0;
    for (int i = 0; i < n; i++) sum += values[i];
    *count = n;
    return sum;
}

int ph_vips_has_alpha(VipsImage *image) { return vips_image_hasalpha(image) ? 1 : 0; }

typedef struct {
    const char *prefix;
    void (*visit)(const char *, void *);
    void *context;
} field_walk;

static void *visit_field(VipsImage *image, const char *name, GValue *value, void *data) {
    (void)image;
    (void)value;
    field_walk *walk = data;
    if (strncmp(name, walk->prefix, strlen(walk->prefix)) == 0) walk->visit(name, walk->context);
    return NULL;
}

void ph_vips_fields(VipsImage *image, const char *prefix, void (*visit)(const char *, void *), void *context) {
    field_walk walk = {prefix, visit, context};
    vips_image_map(image, visit_field, &walk);
}

int ph_vips_rgba8(VipsImage *in, void **pixels, size_t *length) {
    VipsObject *scope = VIPS_OBJECT(vips_image_new());
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    VipsImage *image = in;
    int result = -1;
    // Grey (1 or 2 bands) becomes sRGB; 16-bit and float images become 8-bit.
    if (vips_colourspace(image, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    image = t[0];
    if (image->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast(image, &t[1], VIPS_FORMAT_UCHAR, NULL)) goto done;
        image = t[1];
    }
    if (image->Bands == 3) {
        if (vips_bandjoin_const1(image, &t[2], 255, NULL)) goto done;
        image = t[2];
    } else if (image->Bands > 4) {
        if (vips_extract_band(image, &t[2], 0, "n", 4, NULL)) goto done;
        image = t[2];
    }
    if (image->Bands != 4) {
        vips_error("pipelinehost", "cannot make RGBA of %d bands", image->Bands);
        goto done;
    }
    *pixels = vips_image_write_to_memory(image, length);
    result = *pixels ? 0 : -1;
done:
    g_object_unref(scope);
    return result;
}
