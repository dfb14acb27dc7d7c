/* The CUDA backend (kernels/backend.h) on one GPU: device memory, one
 * stream, cuBLASLt for the matmuls, and the kernels of the .cu files beside it.
 * Compiled only where nvcc is found (CMake option GD_CUDA); the registry
 * (kernels/backend_registry.h) is how the rest of the program reaches it.
 *
 * It fills every slot: buffers; matmul forward and backward (cuBLASLt, fp32
 * storage with bf16 products and fp32 accumulation, the algorithm pinned
 * per shape: kernels/cuda/matmul_lt.h); embedding, RMSNorm,
 * RoPE, causal attention with grouped-query heads and cross-entropy, each
 * forward and backward; add, SwiGLU and AdamW; and the sum of squares,
 * the pseudo-gradient and the outer step with the CPU's bits. Every
 * reduction runs in a fixed order without atomics. */
#ifndef GD_KERNELS_CUDA_BACKEND_CUDA_H
#define GD_KERNELS_CUDA_BACKEND_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "kernels/backend.h"

/* true if a GPU can be used; else false and why in why (cap bytes). */
bool gd_backend_cuda_usable(char *why, size_t cap);

/* Opens GPU `device`: GD_ERR_NOT_FOUND (with the driver's reason) where
 * there is none, GD_ERR_NOMEM when its context or workspace cannot be
 * had. pool serves the fallbacks. */
gd_status gd_backend_cuda_open(gd_backend *out, int device, gd_pool *pool) GD_MUST_CHECK;
void gd_backend_cuda_close(gd_backend *be);

/* Every slot first makes the backend's GPU current, so one thread may drive
 * the backends of several GPUs in turn. What a collective between them needs
 * (kernels/cuda/collective_nccl.c): whether be is a CUDA backend; and, for
 * one that is, its GPU and its stream (a cudaStream_t, as void * to keep CUDA
 * out of this header). */
bool gd_backend_cuda_is(const gd_backend *be);
int gd_backend_cuda_device(const gd_backend *be);
void *gd_backend_cuda_stream(const gd_backend *be);
/* Its transfer queue (backend.h: transfers_after_ops), also a cudaStream_t. */
void *gd_backend_cuda_transfer_stream(const gd_backend *be);

/* How many GEMM shapes the backend has pinned an algorithm for so far. */
size_t gd_backend_cuda_gemm_plans(const gd_backend *be);

/* What decides the bits of its results, as one string: the GPU model and
 * compute capability and SM count, the driver, the CUDA runtime, cuBLAS
 * (cuBLASLt's version), a hash of the kernels' sources and the binary's
 * digest. */
gd_status gd_backend_cuda_identity(char *out, size_t cap, int device) GD_MUST_CHECK;
/* The memory of GPU `device`, in bytes. */
gd_status gd_backend_cuda_memory(uint64_t *out, int device) GD_MUST_CHECK;

#endif
