/* The NCCL collective (see kernels/cuda/collective_nccl.h). */
#include "kernels/cuda/collective_nccl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kernels/cuda/backend_cuda.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/nccl_lazy.h"

typedef struct gd_nccl_rank {
    ncclComm_t comm;
    cudaStream_t stream;    /* the rank's backend's own: copies are ordered with its ops */
    cudaStream_t transfers; /* its transfer queue, for transfer groups */
    int device;
} gd_nccl_rank;

typedef struct gd_nccl_ctx {
    const gd_nccl_api *nccl;
    bool transfers; /* the open group is a transfer group */
    size_t n;
    gd_nccl_rank rank[]; /* n */
} gd_nccl_ctx;

static void nccl_begin(gd_collective *c, bool transfers) {
    gd_nccl_ctx *x = c->ctx;
    x->transfers = transfers;
    GD_NCCL_CHECK(x->nccl->group_start());
}

static void nccl_copy(gd_collective *c, size_t dst_rank, void *dst, size_t src_rank,
                      const void *src, size_t bytes) {
    gd_nccl_ctx *x = c->ctx;
    if (bytes == 0)
        return;
    const gd_nccl_rank *to = &x->rank[dst_rank], *from = &x->rank[src_rank];
    cudaStream_t to_stream = x->transfers ? to->transfers : to->stream;
    cudaStream_t from_stream = x->transfers ? from->transfers : from->stream;
    if (dst_rank == src_rank) {
        GD_CUDA_CHECK(cudaSetDevice(to->device));
        GD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, to_stream));
        return;
    }
    /* Ranks fit an int: open refuses more. */
    GD_NCCL_CHECK(x->nccl->send(src, bytes, ncclUint8, (int)dst_rank, from->comm, from_stream));
    GD_NCCL_CHECK(x->nccl->recv(dst, bytes, ncclUint8, (int)src_rank, to->comm, to_stream));
}

static void nccl_end(gd_collective *c) {
    gd_nccl_ctx *x = c->ctx;
    GD_NCCL_CHECK(x->nccl->group_end());
}

static void nccl_close(gd_collective *c) {
    gd_nccl_ctx *x = c->ctx;
    for (size_t i = 0; i < x->n; i++) {
        /* The last group's transfers may still run on the rank's stream:
         * finish them before their communicator goes. */
        gd_backend_synchronize(&c->ranks[i]);
        GD_NCCL_CHECK(x->nccl->comm_destroy(x->rank[i].comm));
    }
    free(x);
    memset(c, 0, sizeof *c);
}

static const gd_collective_iface gd_nccl_iface = {
    .name = "nccl",
    .begin = nccl_begin,
    .copy = nccl_copy,
    .end = nccl_end,
    .close = nccl_close,
};

/* Fails with status: the reason goes to why (when given) and to gd_fail. */
static gd_status nccl_refuse(gd_status status, char *why, size_t why_cap, const char *fmt, ...)
    GD_PRINTF(4, 5);
static gd_status nccl_refuse(gd_status status, char *why, size_t why_cap, const char *fmt, ...) {
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (why != NULL && why_cap > 0)
        snprintf(why, why_cap, "%s", text);
    return gd_fail(status, "%s", text);
}

gd_status gd_collective_nccl_open(gd_collective *c, const gd_backend *ranks, size_t n, char *why,
                                  size_t why_cap) {
    if (n == 0)
        return nccl_refuse(GD_ERR_INVALID, why, why_cap, "a collective needs at least one rank");
    if (n > INT_MAX || n > (SIZE_MAX - sizeof(gd_nccl_ctx)) / sizeof(gd_nccl_rank))
        return nccl_refuse(GD_ERR_INVALID, why, why_cap, "%zu ranks are too many for NCCL", n);
    for (size_t i = 0; i < n; i++) {
        if (!gd_backend_cuda_is(&ranks[i]))
            return nccl_refuse(GD_ERR_NOT_FOUND, why, why_cap,
                               "rank %zu is a %s backend, not cuda", i, ranks[i].iface->name);
        /* ncclCommInitAll takes one rank per device and refuses a device
         * twice: say which ranks, before NCCL's bare "invalid usage". */
        for (size_t j = 0; j < i; j++)
            if (gd_backend_cuda_device(&ranks[j]) == gd_backend_cuda_device(&ranks[i]))
                return nccl_refuse(GD_ERR_INVALID, why, why_cap,
                                   "ranks %zu and %zu are both on GPU %d", j, i,
                                   gd_backend_cuda_device(&ranks[i]));
    }
    char reason[256];
    const gd_nccl_api *nccl = gd_nccl_load(reason, sizeof reason);
    if (nccl == NULL)
        return nccl_refuse(GD_ERR_NOT_FOUND, why, why_cap, "%s", reason);

    gd_nccl_ctx *x = calloc(1, sizeof *x + n * sizeof x->rank[0]);
    ncclComm_t *comms = calloc(n, sizeof *comms);
    int *devices = calloc(n, sizeof *devices);
    if (x == NULL || comms == NULL || devices == NULL) {
        free(x);
        free(comms);
        free(devices);
        return nccl_refuse(GD_ERR_NOMEM, why, why_cap, "out of memory for %zu NCCL ranks", n);
    }
    for (size_t i = 0; i < n; i++)
        devices[i] = gd_backend_cuda_device(&ranks[i]);
    /* A failure to start (driver too old for this NCCL, no shared memory,
     * ...) is not a failed copy: the host collective can still serve. */
    ncclResult_t r = nccl->comm_init_all(comms, (int)n, devices);
    free(devices);
    if (r != ncclSuccess) {
        free(comms);
        free(x);
        return nccl_refuse(GD_ERR_NOT_FOUND, why, why_cap, "ncclCommInitAll failed: %s",
                           nccl->get_error_string(r));
    }
    x->nccl = nccl;
    x->n = n;
    for (size_t i = 0; i < n; i++)
        x->rank[i] = (gd_nccl_rank){
            .comm = comms[i],
            .stream = (cudaStream_t)gd_backend_cuda_stream(&ranks[i]),
            .transfers = (cudaStream_t)gd_backend_cuda_transfer_stream(&ranks[i]),
            .device = gd_backend_cuda_device(&ranks[i]),
        };
    free(comms);
    *c = (gd_collective){.iface = &gd_nccl_iface, .ctx = x, .ranks = ranks, .n = n};
    return GD_OK;
}
