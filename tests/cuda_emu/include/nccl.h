/* NCCL's API as the emulator provides it (tests/cuda_emu/README.md): the
 * types of the entry points the NCCL collective looks up, with NCCL's names
 * and values. The entry points are in libgd_nccl_emu.so, which the
 * collective loads as it loads libnccl. */
#ifndef GD_CUDA_EMU_NCCL_H
#define GD_CUDA_EMU_NCCL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
} ncclResult_t;

typedef enum { ncclInt8 = 0, ncclChar = 0, ncclUint8 = 1 } ncclDataType_t;

typedef struct ncclComm *ncclComm_t;

#ifdef __cplusplus
}
#endif

#endif
