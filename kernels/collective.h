/* Copies between the buffers of a group of backends, one per device of a
 * host (ranks 0..n-1): what the trainer's data parallelism needs
 * (trainer/train.c) to send each micro-batch's gradient slices to their
 * owners and each owner's updated parameters to every rank. An interface
 * table plus its context (ggml's {iface, ctx}), with two implementations:
 *
 *   host  through host memory, for any backends (kernels/collective_host.c):
 *         tests, and GPUs where NCCL cannot be loaded;
 *   nccl  NCCL's send and receive on the ranks' own streams
 *         (kernels/cuda/collective_nccl.c), one process driving every GPU.
 *
 * Copies are queued between begin and end. After end, every copy is
 * ordered before any op issued afterwards on the receiving rank's backend
 * and before any op that overwrites a sent buffer on the sending rank's
 * (the host implementation copies at once; NCCL's work runs in stream
 * order). A transfer group (gd_collective_begin_transfers) instead runs on
 * each rank's transfer queue (kernels/backend.h), beside the ops: the
 * caller orders it with gd_backend_transfers_after_ops on every rank
 * involved before it, and gd_backend_ops_after_transfers on a rank before
 * the ops that read what it received or overwrite what it sent. (The host
 * implementation copies at once, so its transfer groups need neither.) Copies are plain bytes: they never change a bit, so the results
 * of a data-parallel step depend only on the order the trainer adds them in.
 *
 * Errors. A failed copy is a local failure of the machine: like a backend's
 * transfers (kernels/backend.h), it prints what failed and aborts. */
#ifndef GD_KERNELS_COLLECTIVE_H
#define GD_KERNELS_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"

struct gd_collective;

typedef struct gd_collective_iface {
    const char *name; /* "host", "nccl" */
    void (*begin)(struct gd_collective *c, bool transfers); /* transfers: a transfer group */
    /* Queues a copy of bytes from src, a buffer of rank src_rank's backend,
     * to dst, a buffer of rank dst_rank's (the same rank: a local copy). */
    void (*copy)(struct gd_collective *c, size_t dst_rank, void *dst, size_t src_rank,
                 const void *src, size_t bytes);
    void (*end)(struct gd_collective *c);
    void (*close)(struct gd_collective *c); /* frees ctx; the ranks stay open */
} gd_collective_iface;

typedef struct gd_collective {
    const gd_collective_iface *iface;
    void *ctx;
    const gd_backend *ranks; /* borrowed: n open backends, rank i at ranks[i] */
    size_t n;
} gd_collective;

/* Through host memory: each copy downloads from its source rank and uploads
 * to its destination (a plain copy when both are host memory). ranks is
 * borrowed and must outlive c. GD_ERR_NOMEM, GD_ERR_INVALID for n == 0. */
gd_status gd_collective_host_open(gd_collective *c, const gd_backend *ranks,
                                  size_t n) GD_MUST_CHECK;

/* The best collective for ranks: NCCL where every rank is a CUDA backend
 * and NCCL can be loaded, else the host one. why (may be NULL) says which,
 * and why not NCCL. */
gd_status gd_collective_open(gd_collective *c, const gd_backend *ranks, size_t n, char *why,
                             size_t why_cap) GD_MUST_CHECK;
void gd_collective_close(gd_collective *c); /* a zeroed c is a no-op */

static inline void gd_collective_begin(gd_collective *c) { c->iface->begin(c, false); }
static inline void gd_collective_begin_transfers(gd_collective *c) {
    c->iface->begin(c, true);
}
static inline void gd_collective_copy(gd_collective *c, size_t dst_rank, void *dst,
                                      size_t src_rank, const void *src, size_t bytes) {
    c->iface->copy(c, dst_rank, dst, src_rank, src, bytes);
}
static inline void gd_collective_end(gd_collective *c) { c->iface->end(c); }

#endif
