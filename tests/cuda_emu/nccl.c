/* The emulated NCCL (tests/cuda_emu/README.md): libgd_nccl_emu.so, loaded
 * by the NCCL collective where it would load libnccl. One process drives
 * every device (ncclCommInitAll); sends and receives are queued inside a
 * group and matched at its end, pair by pair in the order they were posted,
 * as NCCL matches them. What would hang NCCL (a send outside a group, one
 * without its receive, sizes that differ) stops the process instead. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "tests/cuda_emu/emu.h"

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
const char *ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclGetVersion(int *version);

#define GD_EMU_COMM_LIVE 0xCC11u

struct ncclComm {
    unsigned magic;
    int rank, ndev, device;
    unsigned clique; /* the ncclCommInitAll call it came from */
};

typedef struct gd_emu_transfer {
    bool send, matched;
    void *buf;
    size_t bytes;
    int peer;
    ncclComm_t comm;
    cudaStream_t stream;
} gd_emu_transfer;

static _Thread_local int gd_emu_group_depth;
static _Thread_local gd_emu_transfer *gd_emu_queue;
static _Thread_local size_t gd_emu_queued, gd_emu_queue_cap;
static unsigned gd_emu_cliques;

const char *ncclGetErrorString(ncclResult_t result) {
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    }
    return "unknown result code";
}

ncclResult_t ncclGetVersion(int *version) {
    *version = 22800;
    return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
    int devices = 0;
    if (ndev <= 0 || cudaGetDeviceCount(&devices) != cudaSuccess)
        return ncclInvalidArgument;
    for (int i = 0; i < ndev; i++) {
        int d = devlist ? devlist[i] : i;
        if (d < 0 || d >= devices)
            return ncclInvalidArgument;
        for (int j = 0; j < i; j++)
            if ((devlist ? devlist[j] : j) == d)
                return ncclInvalidUsage; /* NCCL refuses a device twice */
    }
    unsigned clique = __atomic_add_fetch(&gd_emu_cliques, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < ndev; i++) {
        struct ncclComm *c = malloc(sizeof *c);
        if (c == NULL)
            return ncclSystemError;
        *c = (struct ncclComm){GD_EMU_COMM_LIVE, i, ndev, devlist ? devlist[i] : i, clique};
        comms[i] = c;
    }
    return ncclSuccess;
}

static void gd_emu_comm_check(const char *call, ncclComm_t comm) {
    if (comm == NULL || comm->magic != GD_EMU_COMM_LIVE)
        gd_emu_fail("%s: not a live communicator", call);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    gd_emu_comm_check("ncclCommDestroy", comm);
    comm->magic = 0; /* kept allocated: a later use is caught */
    return ncclSuccess;
}

ncclResult_t ncclGroupStart(void) {
    gd_emu_group_depth++;
    return ncclSuccess;
}

static ncclResult_t gd_emu_post(const char *call, bool send, void *buf, size_t count,
                                ncclDataType_t type, int peer, ncclComm_t comm,
                                cudaStream_t stream) {
    gd_emu_comm_check(call, comm);
    if (gd_emu_group_depth == 0)
        gd_emu_fail("%s outside a group: on one thread it would wait for its peer forever",
                    call);
    if (type != ncclUint8 && type != ncclInt8)
        return ncclInvalidArgument;
    if (peer < 0 || peer >= comm->ndev || peer == comm->rank)
        return ncclInvalidArgument;
    if (gd_emu_stream_device(stream) != comm->device)
        gd_emu_fail("%s: the stream is not on the communicator's device %d", call,
                    comm->device);
    if (gd_emu_queued == gd_emu_queue_cap) {
        size_t cap = gd_emu_queue_cap ? 2 * gd_emu_queue_cap : 64;
        gd_emu_transfer *grown = realloc(gd_emu_queue, cap * sizeof *grown);
        if (grown == NULL)
            return ncclSystemError;
        gd_emu_queue = grown;
        gd_emu_queue_cap = cap;
    }
    gd_emu_queue[gd_emu_queued++] =
        (gd_emu_transfer){.send = send, .buf = buf, .bytes = count, .peer = peer, .comm = comm,
                          .stream = stream};
    return ncclSuccess;
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
    return gd_emu_post("ncclSend", true, (void *)sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
    return gd_emu_post("ncclRecv", false, recvbuff, count, datatype, peer, comm, stream);
}

/* The first unmatched receive of peer's rank from s's rank, after s's own
 * earlier matches: pairs match in posting order. */
static gd_emu_transfer *gd_emu_match(const gd_emu_transfer *s) {
    for (size_t i = 0; i < gd_emu_queued; i++) {
        gd_emu_transfer *r = &gd_emu_queue[i];
        if (!r->send && !r->matched && r->comm->clique == s->comm->clique &&
            r->comm->rank == s->peer && r->peer == s->comm->rank)
            return r;
    }
    return NULL;
}

ncclResult_t ncclGroupEnd(void) {
    if (gd_emu_group_depth == 0)
        return ncclInvalidUsage;
    if (--gd_emu_group_depth > 0)
        return ncclSuccess;
    gd_emu_device_enter();
    for (size_t i = 0; i < gd_emu_queued; i++) {
        gd_emu_transfer *s = &gd_emu_queue[i];
        if (!s->send)
            continue;
        gd_emu_transfer *r = gd_emu_match(s);
        if (r == NULL)
            gd_emu_fail("ncclSend from rank %d to rank %d has no matching ncclRecv: NCCL "
                        "would hang", s->comm->rank, s->peer);
        if (r->bytes != s->bytes)
            gd_emu_fail("ncclSend of %zu bytes from rank %d met an ncclRecv of %zu bytes",
                        s->bytes, s->comm->rank, r->bytes);
        /* The send reads on its stream; the receive, which follows it,
         * writes on its own. */
        int from = gd_emu_stream_number(s->stream), to = gd_emu_stream_number(r->stream);
        gd_emu_order_op(from, "ncclSend");
        bool ok = gd_emu_device_access(s->buf, s->bytes, false) == s->comm->device;
        gd_emu_order_follow(to, from);
        gd_emu_order_op(to, "ncclRecv");
        if (!ok || gd_emu_device_access(r->buf, r->bytes, true) != r->comm->device)
            gd_emu_fail("ncclSend/ncclRecv of %zu bytes: a buffer is not memory of its rank's "
                        "device", s->bytes);
        memmove(r->buf, s->buf, s->bytes);
        s->matched = r->matched = true;
    }
    for (size_t i = 0; i < gd_emu_queued; i++)
        if (!gd_emu_queue[i].matched)
            gd_emu_fail("ncclRecv on rank %d from rank %d has no matching ncclSend: NCCL "
                        "would hang", gd_emu_queue[i].comm->rank, gd_emu_queue[i].peer);
    gd_emu_queued = 0;
    gd_emu_device_leave();
    return ncclSuccess;
}
