/* Large buffers kept for reuse. Memory a process touches for the first
 * time costs a page fault and the kernel's zeroing of every page, and far
 * more in a virtual machine (gd-bench-round measured 0.4-3.9 GB/s there,
 * against 16 GB/s for memory touched before). A node fetches buffers of the
 * same sizes every round (peers' payloads, a check's segment state), so it
 * gives last round's back here and fetches into them. Not thread-safe. */
#ifndef GD_COMMON_BUF_SPARES_H
#define GD_COMMON_BUF_SPARES_H

#include <stddef.h>

#include "common/bytes.h"

#define GD_BUF_SPARES 16

typedef struct gd_buf_spares {
    gd_buf buf[GD_BUF_SPARES];
    size_t n;
} gd_buf_spares;

void gd_buf_spares_free(gd_buf_spares *s);

/* Takes b's storage and leaves b empty. Buffers below GD_MEM_HUGE_MIN
 * (common/mem.h) are simply freed: the allocator reuses those itself. When
 * every slot is taken, the smallest buffer of all is freed. */
void gd_buf_spares_put(gd_buf_spares *s, gd_buf *b);

/* An empty buffer (len 0) with room for want bytes: the smallest kept one
 * that holds them, or nothing kept (an empty gd_buf) when none does or want
 * is below GD_MEM_HUGE_MIN (a transcript must not take a state's buffer). */
gd_buf gd_buf_spares_take(gd_buf_spares *s, size_t want);

#endif
