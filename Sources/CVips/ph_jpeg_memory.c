// libjpeg's large blocks on transparent huge pages.
//
// A progressive JPEG is decoded through a buffer of every DCT coefficient of the image: 50 MB
// for a 4096x4096 photo, even when it is decoded at 1/8 scale. glibc maps blocks that large
// afresh each time (its mmap threshold stops at 32 MB), so each decode took about 12,000 page
// faults, a quarter of its CPU time (BENCHMARKS.md, "fit-in 512"). libjpeg gets such blocks from
// jpeg_get_large and gives them back through jpeg_free_large, which it calls through its PLT:
// these definitions, exported from the executable because libjpeg is on its link line, are the
// ones it reaches. Blocks of 2 MiB or more are mapped here and marked MADV_HUGEPAGE (what glibc's
// glibc.malloc.hugetlb=1 tunable does for its own mappings), so a 50 MB buffer takes about 25
// faults; smaller ones come from malloc. PIPELINEHOST_JPEG_HUGE_PAGES=0 sends every block to
// malloc.
#include "ph_vips.h"

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
typedef struct {
    size_t mapped;  // the mapping's length; 0 for a block from malloc
    uint64_t magic;
    char padding[48];  // keeps what libjpeg gets 64-byte aligned
} block_header;

static const uint64_t header_magic = 0x70686a7067626c6bULL;  // "phjpgblk"
static atomic_long mapped_blocks;
static atomic_int policy;  // 0: not read yet, 1: huge pages, 2: malloc only

static int use_huge_pages(void) {
    int known = atomic_load(&policy);
    if (!known) {
        const char *setting = getenv("PIPELINEHOST_JPEG_HUGE_PAGES");
        known = setting && strcmp(setting, "0") == 0 ? 2 : 1;
        atomic_store(&policy, known);
    }
    return known == 1;
}

void *jpeg_get_large(void *cinfo, size_t size) {
    (void)cinfo;
    if (size > SIZE_MAX - huge_page - sizeof(block_header)) return NULL;
    size_t total = size + sizeof(block_header);
    block_header *header;
    if (total >= huge_page && use_huge_pages()) {
        size_t length = (total + huge_page - 1) & ~((size_t)huge_page - 1);
        void *mapping = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping == MAP_FAILED) return NULL;
        (void)madvise(mapping, length, MADV_HUGEPAGE);
        header = mapping;
        header->mapped = length;
        atomic_fetch_add(&mapped_blocks, 1);
    } else {
        header = malloc(total);
        if (!header) return NULL;
        header->mapped = 0;
    }
    header->magic = header_magic;
    return header + 1;
}

void jpeg_free_large(void *cinfo, void *object, size_t size) {
    (void)cinfo;
    (void)size;
    if (!object) return;
    block_header *header = (block_header *)object - 1;
    if (header->magic != header_magic) abort();  // not ours: a mismatched allocator, never expected
    header->magic = 0;
    if (header->mapped) munmap(header, header->mapped);
    else free(header);
}

long ph_jpeg_huge_blocks(void) { return atomic_load(&mapped_blocks); }
