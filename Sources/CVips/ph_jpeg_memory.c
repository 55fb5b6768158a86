// libjpeg's large blocks on transparent huge pages, and kept for the next decode.
//
// A progressive JPEG is decoded through a buffer of every DCT coefficient of the image: 50 MB
// for a 4096x4096 4:2:0 photo (100 MB at 4:4:4), even when it is decoded at 1/8 scale. glibc maps blocks that large
// afresh each time (its mmap threshold stops at 32 MB), so each decode took about 26,000 page
// faults and the kernel zeroed every page, which libjpeg then zeroes again (BENCHMARKS.md,
// "fit-in 512"). libjpeg gets such blocks from jpeg_get_large and gives them back through
// jpeg_free_large, which it calls through its PLT: these definitions, exported from the
// executable because libjpeg is on its link line, are the ones it reaches.
// - Blocks of 2 MiB or more are mapped here and marked MADV_HUGEPAGE (what glibc's
//   glibc.malloc.hugetlb=1 tunable does for its own mappings): a 50 MB buffer takes ~25 faults.
// - A freed block is kept, up to 6 blocks and 128 MiB in all (a 4096x4096 4:4:4 photo takes 3
//   of 34 MiB; less in a small memory limit, ph_jpeg_set_kept_limit), and handed to the next request of a size it fits (no more than twice the
//   size): no faults and no zeroing by the kernel. libjpeg, like malloc's callers, expects
//   nothing of a block's contents. Those 128 MiB stay resident once used.
// Smaller blocks come from malloc, behind the same header. PIPELINEHOST_JPEG_HUGE_PAGES=0 sends
// every block to malloc as libjpeg's own allocator does.
#include "ph_internal.h"
#include "ph_vips.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *jpeg_get_large(void *cinfo, size_t size);
void jpeg_free_large(void *cinfo, void *object, size_t size);

enum { huge_page = 2 << 20 };

// Each block starts with this header, so freeing needs neither the size libjpeg passes back
// nor any table: the block says how it was made.
// A block may be freed on another thread than the one that got it (a libvips worker gets it,
// the caller frees it), ordered by GLib in ways ThreadSanitizer cannot see: the magic is
// written last with release and read first with acquire, which orders `mapped` for both.
typedef struct {
    size_t mapped;  // the mapping's length; 0 for a block from malloc
    _Atomic uint64_t magic;
    char padding[48];  // keeps what libjpeg gets 64-byte aligned
} block_header;

static const uint64_t header_magic = 0x70686a7067626c6bULL;  // "phjpgblk"
static atomic_long mapped_blocks, reused_blocks;

enum { kept_most = 6 };
static size_t kept_bytes_most = (size_t)128 << 20;  // under kept_lock
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static void *kept[kept_most];
static size_t kept_length[kept_most], kept_total;

void ph_jpeg_set_kept_limit(size_t bytes) {
    pthread_mutex_lock(&kept_lock);
    kept_bytes_most = bytes;
    pthread_mutex_unlock(&kept_lock);
}

// A kept mapping of at least `length` and at most twice it, taken out of the store; NULL if none.
static void *take_kept(size_t length, size_t *found) {
    void *block = NULL;
    pthread_mutex_lock(&kept_lock);
    int best = -1;
    for (int i = 0; i < kept_most; i++)
        if (kept[i] && kept_length[i] >= length && kept_length[i] / 2 <= length &&
            (best < 0 || kept_length[i] < kept_length[best]))
            best = i;
    if (best >= 0) {
        block = kept[best];
        *found = kept_length[best];
        kept_total -= kept_length[best];
        kept[best] = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
    return block;
}

// Keeps a mapping for the next decode if there is room; otherwise the caller unmaps it.
static int keep(void *block, size_t length) {
    int kept_it = 0;
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < kept_most && !kept_it; i++)
        if (!kept[i] && kept_total + length <= kept_bytes_most) {
            kept[i] = block;
            kept_length[i] = length;
            kept_total += length;
            kept_it = 1;
        }
    pthread_mutex_unlock(&kept_lock);
    return kept_it;
}

static atomic_int switch_cache = -1;

static int use_huge_pages(void) { return !ph_switched_off("PIPELINEHOST_JPEG_HUGE_PAGES", &switch_cache); }

// With PIPELINEHOST_JPEG_HUGE_PAGES=0, blocks are libjpeg's own malloc'd ones, without a header,
// so that AddressSanitizer checks all of each (scripts/fuzz). The setting is read once, at the
// first block, and holds for every block after.
void *jpeg_get_large(void *cinfo, size_t size) {
    (void)cinfo;
    if (!use_huge_pages()) return malloc(size);
    if (size > SIZE_MAX - huge_page - sizeof(block_header)) return NULL;
    size_t total = size + sizeof(block_header);
    block_header *header;
    if (total >= huge_page) {
        size_t length = (total + huge_page - 1) & ~((size_t)huge_page - 1);
        void *mapping = take_kept(length, &length);
        if (mapping) {
            atomic_fetch_add(&reused_blocks, 1);
        } else {
            mapping = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (mapping == MAP_FAILED) return NULL;
            (void)madvise(mapping, length, MADV_HUGEPAGE);
            atomic_fetch_add(&mapped_blocks, 1);
        }
        header = mapping;
        header->mapped = length;
    } else {
        header = malloc(total);
        if (!header) return NULL;
        header->mapped = 0;
    }
    atomic_store_explicit(&header->magic, header_magic, memory_order_release);
    return header + 1;
}

void jpeg_free_large(void *cinfo, void *object, size_t size) {
    (void)cinfo;
    (void)size;
    if (!object) return;
    if (!use_huge_pages()) {
        free(object);
        return;
    }
    block_header *header = (block_header *)object - 1;
    if (atomic_load_explicit(&header->magic, memory_order_acquire) != header_magic) abort();  // not ours: never expected
    atomic_store_explicit(&header->magic, 0, memory_order_relaxed);
    if (!header->mapped) free(header);
    else if (!keep(header, header->mapped)) munmap(header, header->mapped);
}

long ph_jpeg_huge_blocks(void) { return atomic_load(&mapped_blocks); }
long ph_jpeg_reused_blocks(void) { return atomic_load(&reused_blocks); }
