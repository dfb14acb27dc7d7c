/* The collective through host memory (kernels/collective.h): every copy
 * goes down from its source rank and up to its destination through one
 * bounce buffer of fixed size, so a copy of any size needs no more memory
 * than the collective took when it opened. */
#include "kernels/collective.h"

#include <stdlib.h>
#include <string.h>

#define GD_BOUNCE_BYTES ((size_t)4 << 20)

typedef struct gd_collective_host {
    unsigned char *bounce; /* GD_BOUNCE_BYTES */
} gd_collective_host;

/* Copies run at once, so a transfer group is ordered like any other. */
static void host_begin(gd_collective *c, bool transfers) {
    (void)c;
    (void)transfers;
}

static void host_copy(gd_collective *c, size_t dst_rank, void *dst, size_t src_rank,
                      const void *src, size_t bytes) {
    const gd_backend *from = &c->ranks[src_rank], *to = &c->ranks[dst_rank];
    if (bytes == 0)
        return;
    if (src_rank == dst_rank) {
        gd_backend_copy(to, dst, src, bytes);
        return;
    }
    if (from->iface->host_memory && to->iface->host_memory) {
        memcpy(dst, src, bytes);
        return;
    }
    /* Device buffers are opaque addresses: offsets are arithmetic on them,
     * never dereferenced here. */
    gd_collective_host *h = c->ctx;
    for (size_t done = 0; done < bytes; done += GD_BOUNCE_BYTES) {
        size_t part = bytes - done < GD_BOUNCE_BYTES ? bytes - done : GD_BOUNCE_BYTES;
        gd_backend_download(from, h->bounce, (const unsigned char *)src + done, part);
        gd_backend_upload(to, (unsigned char *)dst + done, h->bounce, part);
    }
}

static void host_end(gd_collective *c) { (void)c; }

static void host_close(gd_collective *c) {
    gd_collective_host *h = c->ctx;
    free(h->bounce);
    free(h);
}

static const gd_collective_iface gd_collective_host_iface = {
    .name = "host", .begin = host_begin, .copy = host_copy, .end = host_end,
    .close = host_close};

gd_status gd_collective_host_open(gd_collective *c, const gd_backend *ranks, size_t n) {
    memset(c, 0, sizeof *c);
    if (n == 0)
        return gd_fail(GD_ERR_INVALID, "a collective needs at least one rank");
    gd_collective_host *h = calloc(1, sizeof *h);
    if (h != NULL)
        h->bounce = malloc(GD_BOUNCE_BYTES);
    if (h == NULL || h->bounce == NULL) {
        free(h);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    *c = (gd_collective){.iface = &gd_collective_host_iface, .ctx = h, .ranks = ranks, .n = n};
    return GD_OK;
}
