/* NCCL, loaded when the first NCCL collective opens rather than linked: the
 * library is about 200 megabytes, most commands never copy between GPUs,
 * and a host without it must still run the CUDA backend alone. Only the
 * entry points the collective calls are looked up. */
#ifndef GD_KERNELS_CUDA_NCCL_LAZY_H
#define GD_KERNELS_CUDA_NCCL_LAZY_H

#include <stddef.h>

#include <nccl.h>

typedef struct gd_nccl_api {
    ncclResult_t (*comm_init_all)(ncclComm_t *comms, int ndev, const int *devlist);
    ncclResult_t (*comm_destroy)(ncclComm_t comm);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
    ncclResult_t (*send)(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                         ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*recv)(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                         ncclComm_t comm, cudaStream_t stream);
    const char *(*get_error_string)(ncclResult_t result);
    ncclResult_t (*get_version)(int *version);
} gd_nccl_api;

/* The entry points, loaded once (thread-safe); NULL, with why, when the
 * library or one of them cannot be found. */
const gd_nccl_api *gd_nccl_load(char *why, size_t cap);

/* NCCL's own words for result (GD_NCCL_CHECK's reason, kernels/cuda/cuda_check.h):
 * a call can only have failed once the library is loaded, but this answers
 * even when it is not. */
const char *gd_nccl_error_string(int result);

#endif
