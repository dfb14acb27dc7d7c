/* The NCCL collective (kernels/collective.h): one process and one host
 * thread drive every GPU of the host, each rank a CUDA backend with its own
 * communicator from ncclCommInitAll. A copy between ranks is an ncclSend on
 * the source rank's stream and an ncclRecv on the destination's, so it is
 * ordered with each rank's ops without any host synchronization; a copy
 * within a rank is a device-to-device copy on its stream.
 *
 * The copies of one begin/end run concurrently (NCCL's group semantics),
 * and a local copy is issued at once while the sends and receives start at
 * end: no copy of a group may read or overwrite what another one writes.
 *
 * Plain C, free of CUDA types: kernels/collective.c includes it. */
#ifndef GD_KERNELS_CUDA_COLLECTIVE_NCCL_H
#define GD_KERNELS_CUDA_COLLECTIVE_NCCL_H

#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"
#include "kernels/collective.h"

/* Opens the collective over n CUDA backends (ranks, borrowed: they must
 * outlive c), one per GPU. GD_ERR_NOT_FOUND where some rank is not a CUDA
 * backend or NCCL cannot be loaded or started (the caller then falls back to
 * the host collective); GD_ERR_INVALID for n == 0 or two ranks on one GPU;
 * GD_ERR_NOMEM. On failure why (may be NULL) says why, as does gd_fail. */
gd_status gd_collective_nccl_open(gd_collective *c, const gd_backend *ranks, size_t n, char *why,
                                  size_t why_cap) GD_MUST_CHECK;

#endif
