/* A hint for large buffers (model arrays, states, payload and state files
 * in memory): back them with transparent huge pages. Linux's usual THP mode
 * is "madvise", where only regions a process marks get them; unmarked, a
 * 150 MB state is faulted in 4 KiB page by page, and each fault is costly
 * (more so in a virtual machine). Marking a buffer before it is first
 * touched cuts the faults 512-fold: gd-bench-round's fetch + verify of the
 * `small` model ran about 3x faster, encode + fsync 4x. */
#ifndef GD_COMMON_MEM_H
#define GD_COMMON_MEM_H

#include <stddef.h>

/* Buffers below this are left alone. */
#define GD_MEM_HUGE_MIN ((size_t)4 << 20)

/* Marks the 2 MiB-aligned interior of [p, p + len) for huge pages; a hint
 * only (failures and kernels without THP are ignored). */
void gd_mem_prefer_huge(void *p, size_t len);

/* calloc(count, size), marked for huge pages when large. */
void *gd_calloc_large(size_t count, size_t size);

/* The process's peak resident memory in bytes (VmHWM), 0 where the kernel
 * does not say; gd_mem_peak_reset starts a new high-water mark from what
 * is resident now (where the kernel allows it). */
unsigned long long gd_mem_peak_bytes(void);
void gd_mem_peak_reset(void);

#endif
