/* One family of error checks for CUDA, cuBLAS and NCCL calls. A failed
 * call is a local failure of the machine (kernels/backend.h): it prints the
 * call, where it was made and the library's reason, and stops the process,
 * so no half-computed tensor reaches a transcript. Usable from C and from
 * CUDA C++. */
#ifndef GD_KERNELS_CUDA_CUDA_CHECK_H
#define GD_KERNELS_CUDA_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#define GD_CUDA_FAIL(lib, call, reason)                                                    \
    do {                                                                                   \
        fprintf(stderr, "gonka-diloco: %s call failed at %s:%d: %s: %s\n", lib, __FILE__,   \
                __LINE__, call, reason);                                                   \
        abort();                                                                           \
    } while (0)

#define GD_CUDA_CHECK(call)                                                               \
    do {                                                                                  \
        cudaError_t gd_cuda_err_ = (call);                                                \
        if (gd_cuda_err_ != cudaSuccess)                                                  \
            GD_CUDA_FAIL("CUDA", #call, cudaGetErrorString(gd_cuda_err_));                \
    } while (0)

/* After a kernel launch: the launch's own error (bad configuration). */
#define GD_CUDA_CHECK_LAUNCH() GD_CUDA_CHECK(cudaGetLastError())

#define GD_CUBLAS_CHECK(call)                                                             \
    do {                                                                                  \
        int gd_cublas_err_ = (int)(call);                                                 \
        if (gd_cublas_err_ != 0) {                                                        \
            char gd_cublas_reason_[32];                                                   \
            snprintf(gd_cublas_reason_, sizeof gd_cublas_reason_, "cublasStatus_t %d",    \
                     gd_cublas_err_);                                                     \
            GD_CUDA_FAIL("cuBLAS", #call, gd_cublas_reason_);                             \
        }                                                                                 \
    } while (0)

/* NCCL is loaded at run time (kernels/cuda/nccl_lazy.h), so its own words
 * come through gd_nccl_error_string: whoever uses this includes that header. */
#define GD_NCCL_CHECK(call)                                                               \
    do {                                                                                  \
        int gd_nccl_err_ = (int)(call);                                                   \
        if (gd_nccl_err_ != 0) {                                                          \
            char gd_nccl_reason_[192];                                                    \
            snprintf(gd_nccl_reason_, sizeof gd_nccl_reason_, "%s (ncclResult_t %d)",     \
                     gd_nccl_error_string(gd_nccl_err_), gd_nccl_err_);                   \
            GD_CUDA_FAIL("NCCL", #call, gd_nccl_reason_);                                 \
        }                                                                                 \
    } while (0)

#endif
