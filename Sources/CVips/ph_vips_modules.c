#define _GNU_SOURCE  // dladdr
#include "ph_internal.h"
#include "ph_vips.h"

#include <dlfcn.h>
#include <gmodule.h>
#include <stdatomic.h>
#include <string.h>

// libvips opens every module in its module directory when it starts: HEIF, JPEG XL, PDF
// (poppler), OpenSlide and ImageMagick, about 40 ms of a 200 ms run, for formats most runs never
// meet. So libvips starts with no module directory (VIPSHOME pointed at /dev/null, whose lib/
// cannot exist), and the modules are opened as libvips would open them, the first time
// something needs them: bytes that libvips' built-in JPEG, PNG, GIF and WebP loaders do not
// read, or a HEIF, AVIF or JPEG XL save. ImageMagick's, whose loaders stay blocked, opens only
// for a profile that lists "magick".

// The directory libvips would have read: next to the libvips the process loaded. NULL when it
// is not there (a libvips built without modules): then libvips starts as it always did.
static char *module_directory(void) {
    Dl_info info;
    if (!dladdr((void *)vips_init, &info) || !info.dli_fname) return NULL;
    char *lib = g_path_get_dirname(info.dli_fname);
    char *name = g_strdup_printf("vips-modules-%d.%d", VIPS_MAJOR_VERSION, VIPS_MINOR_VERSION);
    char *directory = g_build_filename(lib, name, NULL);
    g_free(lib);
    g_free(name);
    if (!g_file_test(directory, G_FILE_TEST_IS_DIR)) {
        g_free(directory);
        return NULL;
    }
    return directory;
}

static char *modules = NULL;
static atomic_int jxl_input_allowed;

int ph_vips_start(const char *program) {
    modules = module_directory();
    if (!modules) return VIPS_INIT(program);
    char *saved = g_strdup(g_getenv("VIPSHOME"));
    g_setenv("VIPSHOME", "/dev/null", TRUE);
    int result = VIPS_INIT(program);
    // libvips leaves VIPSHOME set; put back what the process had, so a child `vips` finds its
    // modules.
    if (saved) g_setenv("VIPSHOME", saved, TRUE);
    else g_unsetenv("VIPSHOME");
    g_free(saved);
    return result;
}

static int is_magick(const char *file) { return g_str_has_prefix(file, "vips-magick."); }

// Opens the modules `magick` says (ImageMagick's, or all the others), kept open for the life of
// the process as libvips keeps its own; one that fails to open is skipped, as libvips skips it.
static void open_modules(int magick) {
    GDir *directory = g_dir_open(modules, 0, NULL);
    if (!directory) return;
    for (const char *file; (file = g_dir_read_name(directory));) {
        if (!g_str_has_suffix(file, "." G_MODULE_SUFFIX) || is_magick(file) != magick) continue;
        char *path = g_build_filename(modules, file, NULL);
        (void)g_module_open(path, G_MODULE_BIND_LAZY);
        g_free(path);
    }
    g_dir_close(directory);
}

// The loaders a module adds are blocked as untrusted, like those there at start-up
// (vips_block_untrusted_set marks only the classes that exist when it is called). No JPEG XL
// or HEIF operation can be running yet: each opens the modules first, and waits for this.
void ph_vips_open_modules(void) {
    static gsize opened = 0;
    if (!modules || !g_once_init_enter(&opened)) return;
    open_modules(0);
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignSaveJxl", FALSE);
    if (atomic_load(&jxl_input_allowed)) vips_operation_block_set("VipsForeignLoadJxl", FALSE);
    g_once_init_leave(&opened, 1);
}

// Later, with JPEG XL work perhaps running, only ImageMagick's own classes are blocked.
void ph_vips_open_magick(void) {
    static gsize opened = 0;
    ph_vips_open_modules();
    if (!modules || !g_once_init_enter(&opened)) return;
    open_modules(1);
    vips_operation_block_set("VipsForeignLoadMagick", TRUE);   // ImageMagick 6
    vips_operation_block_set("VipsForeignLoadMagick7", TRUE);  // ImageMagick 7
    vips_operation_block_set("VipsForeignSaveMagick", TRUE);
    g_once_init_leave(&opened, 1);
}

void ph_vips_modules_for(const void *buffer, size_t length) {
    // Asked loader by loader, which sets no error (vips_foreign_find_load_buffer would, in
    // libvips' one error buffer, which other threads read).
    static const char *const built_in[] = {"jpegload_buffer", "pngload_buffer", "gifload_buffer", "webpload_buffer"};
    static atomic_int opened;
    if (!modules || atomic_load(&opened)) return;
    for (size_t i = 0; i < G_N_ELEMENTS(built_in); i++)
        if (vips_foreign_is_a_buffer(built_in[i], buffer, length)) return;
    ph_vips_open_modules();
    atomic_store(&opened, 1);
}

void ph_vips_allow_jxl_input(void) {
    atomic_store(&jxl_input_allowed, 1);
    ph_vips_open_modules();
    vips_operation_block_set("VipsForeignLoadJxl", FALSE);
}
