/* Huge-page hints for large buffers, and the peak resident memory
 * (common/mem.h). */
#include "common/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define GD_MEM_HUGE_PAGE ((uintptr_t)2 << 20)

void gd_mem_prefer_huge(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
    if (p == NULL || len < GD_MEM_HUGE_MIN)
        return;
    uintptr_t lo = ((uintptr_t)p + GD_MEM_HUGE_PAGE - 1) & ~(GD_MEM_HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~(GD_MEM_HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}

void *gd_calloc_large(size_t count, size_t size) {
    void *p = calloc(count, size);
    if (p != NULL && count > 0 && size <= SIZE_MAX / count)
        gd_mem_prefer_huge(p, count * size);
    return p;
}

void gd_mem_peak_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return;
    fputs("5", f);
    fclose(f);
}

unsigned long long gd_mem_peak_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return kib * 1024;
}
