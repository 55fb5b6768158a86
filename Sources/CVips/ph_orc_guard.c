// One lock around liborc's compile and free, so libvips' run-time SIMD can stay on.
//
// liborc 0.4.33 (Debian 12) hands out and gives back executable code chunks without a lock:
// two threads compiling or freeing Orc programs at once corrupt its chunk list (crashes in
// orc_code_free, freed code run; scripts/orc-race). liborc 0.4.34 fixed it by taking its global
// mutex around both (GStreamer/orc e48fa54). libvips reaches both only through
// orc_program_compile and orc_program_free, which it calls through its PLT; liborc's own
// internal calls are direct. So these two definitions, exported from the executable because
// libvips refers to them, are what libvips calls: each takes one lock and calls liborc's own.
// A lock of ours, not orc_global_mutex: compile takes that one inside, and it is not recursive.
#include "ph_internal.h"
#include "ph_vips.h"

#include <orc/orc.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t guard = PTHREAD_MUTEX_INITIALIZER;
static atomic_long guarded_calls;

typedef OrcCompileResult (*compile_fn)(OrcProgram *);
typedef void (*free_fn)(OrcProgram *);

static _Atomic(void *) real_compile, real_free;

OrcCompileResult orc_program_compile(OrcProgram *program) {
    compile_fn compile = (compile_fn)ph_next_definition(&real_compile, "orc_program_compile");
    if (!compile) return ORC_COMPILE_RESULT_UNKNOWN_PARSE; // fatal: libvips runs its plain C path
    pthread_mutex_lock(&guard);
    OrcCompileResult result = compile(program);
    pthread_mutex_unlock(&guard);
    atomic_fetch_add(&guarded_calls, 1);
    return result;
}

void orc_program_free(OrcProgram *program) {
    free_fn release = (free_fn)ph_next_definition(&real_free, "orc_program_free");
    if (!release) return;
    pthread_mutex_lock(&guard);
    release(program);
    pthread_mutex_unlock(&guard);
    atomic_fetch_add(&guarded_calls, 1);
}

int ph_orc_guard_active(void) {
    // What a call through the global scope (libvips' PLT) reaches must be the definitions here.
    // A link that does not export them (a shared build of this shim, say) reaches liborc's.
    return dlsym(RTLD_DEFAULT, "orc_program_compile") == (void *)orc_program_compile &&
           dlsym(RTLD_DEFAULT, "orc_program_free") == (void *)orc_program_free &&
           ph_next_definition(&real_compile, "orc_program_compile") && ph_next_definition(&real_free, "orc_program_free");
}

long ph_orc_guarded_calls(void) { return atomic_load(&guarded_calls); }
