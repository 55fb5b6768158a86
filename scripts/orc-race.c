// The liborc race that Sources/CVips/ph_orc_guard.c's lock closes (BENCHMARKS.md, section 10).
// Threads each build, run and free libvips operations that compile Orc code, with liborc on.
//   orc-race IMAGE THREADS ROUNDS [blur|resize|both] [VIPS_THREADS]
// On libvips 8.14.1 with liborc 0.4.33, 8 threads crash within seconds, in orc_code_free (an
// operation disposed while another compiles) or with a corrupted heap; one thread does not.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <vips/vips.h>
#include <vips/vector.h>

// Present when scripts/orc-race links Sources/CVips/ph_orc_guard.c (the default).
extern long ph_orc_guarded_calls(void) __attribute__((weak));

static VipsImage *source;
static int rounds;
static const char *mode = "both";

static void *work(void *unused) {
    (void)unused;
    for (int i = 0; i < rounds; i++) {
        VipsImage *blurred = NULL, *resized = NULL;
        // A different mask or scale each round: a new Orc program to compile each time.
        int failed = strcmp(mode, "resize") == 0 ? vips_copy(source, &blurred, NULL)
                                                 : vips_gaussblur(source, &blurred, 2 + i % 13, NULL);
        if (!failed) {
            failed = strcmp(mode, "blur") == 0 ? vips_copy(blurred, &resized, NULL)
                                               : vips_resize(blurred, &resized, 0.37 + (i % 7) * 0.05, NULL);
        }
        if (failed) {
            fprintf(stderr, "%s", vips_error_buffer());
            return NULL;
        }
        size_t length;
        g_free(vips_image_write_to_memory(resized, &length));
        g_object_unref(blurred);
        g_object_unref(resized);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4 || VIPS_INIT(argv[0])) {
        fprintf(stderr, "usage: orc-race IMAGE THREADS ROUNDS [blur|resize|both] [VIPS_THREADS]\n");
        return 2;
    }
    vips_cache_set_max(0);
    vips_concurrency_set(argc > 5 ? atoi(argv[5]) : 1);
    int threads = atoi(argv[2]);
    rounds = atoi(argv[3]);
    if (argc > 4) mode = argv[4];
    VipsImage *file = vips_image_new_from_file(argv[1], NULL);
    if (!file || !(source = vips_image_copy_memory(file))) {
        fprintf(stderr, "%s", vips_error_buffer());
        return 2;
    }
    pthread_t ids[256];
    if (threads < 1 || threads > 256) return 2;
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, work, NULL);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    printf("clean: %d threads x %d rounds (%s), liborc %s, %ld compiles and frees behind the guard\n", threads, rounds, mode,
           vips_vector_isenabled() ? "on" : "off", ph_orc_guarded_calls ? ph_orc_guarded_calls() : 0L);
    return 0;
}
