// libvips' error messages, kept per failure instead of in one buffer for the whole process.
//
// libvips 8.14 keeps one error buffer and one freeze count, both global. Each of its uses
// could lose another image's cause when two fail at once: a thread that copies and clears the
// buffer after its failure takes every thread's messages (the other then reads "unknown libvips
// error"); a clear after an expected failure wipes the others'; a freeze while one thread
// probes loaders drops the messages every other thread logs meanwhile. libvips calls
// vips_verror, vips_error_clear, vips_error_freeze and vips_error_thaw through its PLT (objdump:
// no direct calls), so the definitions here, exported from the executable, are what it
// reaches, as ph_orc_guard.c does for liborc.
//
// Every message goes into a numbered log of the last LOG_SIZE. A failure reads the messages
// numbered from the mark taken before its operation began, its own thread's first: another
// image failing at the same moment can add its own after them, but none is taken away. A freeze counts for its own thread, and a
// clear forgets only the calling thread's messages. Messages are still passed on to libvips'
// buffer, which its own warnings print.
//
// Some failures log no error at all, only warnings (libpng's "not enough data" for a PNG cut
// inside its header): libvips' warnings are kept in a log of their own, read when a failure
// has no error, so its cause is still named.
#include "ph_internal.h"
#include "ph_vips.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { ERRORS = 512, WARNINGS = 128, MESSAGE_MAX = 512 };

typedef struct {
    uint64_t number;     // 0: never written
    const void *thread;  // the thread that logged it (the address of its `frozen`)
    int cleared;
    char text[MESSAGE_MAX];
} logged;

// The last `size` messages, oldest first from `written % size` once it has wrapped.
typedef struct {
    logged *entries;
    size_t size, written;
} ring;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static logged error_entries[ERRORS], warning_entries[WARNINGS];
static ring errors = {error_entries, ERRORS, 0}, warnings = {warning_entries, WARNINGS, 0};
static uint64_t next_number = 1;  // one numbering for both, so one mark serves both

static _Thread_local int frozen;

typedef void (*verror_fn)(const char *, const char *, va_list);
typedef void (*clear_fn)(void);
static _Atomic(void *) real_verror, real_clear;
static atomic_int interposed = -1;  // -1: not looked up yet

// Adds the calling thread's message. One it logged just before takes a new number instead of a
// new entry (libpng warns "not enough data" hundreds of times for one file).
static void record(ring *log, const char *text) {
    pthread_mutex_lock(&lock);
    logged *last = log->written ? &log->entries[(log->written - 1) % log->size] : NULL;
    if (last && last->thread == &frozen && !last->cleared && strcmp(last->text, text) == 0) {
        last->number = next_number++;
    } else {
        logged *entry = &log->entries[log->written++ % log->size];
        entry->number = next_number++;
        entry->thread = &frozen;
        entry->cleared = 0;
        g_strlcpy(entry->text, text, sizeof entry->text);
    }
    pthread_mutex_unlock(&lock);
}

void vips_verror(const char *domain, const char *fmt, va_list ap) {
    if (frozen > 0) return;  // libvips drops a frozen thread's messages too
    char text[MESSAGE_MAX];
    int used = domain ? snprintf(text, sizeof text, "%s: ", domain) : 0;
    if (used < 0 || used >= (int)sizeof text) used = 0;
    va_list copy;
    va_copy(copy, ap);
    vsnprintf(text + used, sizeof text - (size_t)used, fmt, copy);
    va_end(copy);
    g_strchomp(text);
    record(&errors, text);

    verror_fn forward = (verror_fn)ph_next_definition(&real_verror, "vips_verror");
    if (forward) forward(domain, fmt, ap);
}

void ph_vips_log_warning(const char *message) {
    char text[MESSAGE_MAX];
    g_strlcpy(text, message ? message : "", sizeof text);
    g_strchomp(text);
    if (*text) record(&warnings, text);
}

static void clear_own(ring *log) {
    for (size_t i = 0; i < log->size; i++)
        if (log->entries[i].thread == &frozen) log->entries[i].cleared = 1;
}

void vips_error_clear(void) {
    pthread_mutex_lock(&lock);
    clear_own(&errors);
    clear_own(&warnings);
    pthread_mutex_unlock(&lock);
    clear_fn forward = (clear_fn)ph_next_definition(&real_clear, "vips_error_clear");
    if (forward) forward();
}

void vips_error_freeze(void) { frozen++; }

void vips_error_thaw(void) {
    if (frozen > 0) frozen--;
}

uint64_t ph_vips_error_mark(void) {
    pthread_mutex_lock(&lock);
    uint64_t mark = next_number;
    pthread_mutex_unlock(&lock);
    return mark;
}

// Appends the entry unless its text is there already (eight images failing alike log eight).
static void append_once(GString *text, const logged *entry) {
    size_t length = strlen(entry->text);
    for (const char *at = text->str; (at = strstr(at, entry->text)); at++)
        if ((at == text->str || at[-1] == '\n') && (at[length] == 0 || at[length] == '\n')) return;
    if (text->len) g_string_append_c(text, '\n');
    g_string_append(text, entry->text);
}

// The messages from `mark` on, the calling thread's (`own`) or the others'.
static void append_since(GString *text, const ring *log, uint64_t mark, int own) {
    size_t count = log->written < log->size ? log->written : log->size;
    size_t oldest = log->written < log->size ? 0 : log->written % log->size;
    for (size_t k = 0; k < count; k++) {
        const logged *entry = &log->entries[(oldest + k) % log->size];
        if (entry->number >= mark && !entry->cleared && (entry->thread == &frozen) == own) append_once(text, entry);
    }
}

char *ph_vips_errors_since(uint64_t mark) {
    GString *text = g_string_new(NULL);
    pthread_mutex_lock(&lock);
    // The calling thread's first (a header's cause is logged where it was read), then the
    // others': a pixel's cause is logged on whichever worker computed it. Warnings only where
    // there is no error.
    append_since(text, &errors, mark, 1);
    if (!text->len) append_since(text, &warnings, mark, 1);
    size_t own = text->len;
    append_since(text, &errors, mark, 0);
    if (text->len == own) append_since(text, &warnings, mark, 0);
    pthread_mutex_unlock(&lock);
    if (!text->len && !ph_vips_errors_interposed()) {
        // A link that does not export the definitions above (a shared build of this shim):
        // libvips' own buffer, shared, as before.
        char *shared = vips_error_buffer_copy();
        g_string_append(text, shared ? g_strchomp(shared) : "");
        g_free(shared);
    } else {
        // libvips' own buffer only feeds its warnings now: kept short, as before.
        clear_fn forward = (clear_fn)ph_next_definition(&real_clear, "vips_error_clear");
        if (forward) forward();
    }
    return g_string_free(text, text->len == 0);
}

int ph_vips_errors_interposed(void) {
    int known = atomic_load(&interposed);
    if (known >= 0) return known;
    known = dlsym(RTLD_DEFAULT, "vips_verror") == (void *)vips_verror &&
            dlsym(RTLD_DEFAULT, "vips_error_clear") == (void *)vips_error_clear &&
            dlsym(RTLD_DEFAULT, "vips_error_freeze") == (void *)vips_error_freeze &&
            dlsym(RTLD_DEFAULT, "vips_error_thaw") == (void *)vips_error_thaw;
    atomic_store(&interposed, known);
    return known;
}
