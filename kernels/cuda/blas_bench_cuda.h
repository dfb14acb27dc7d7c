/* The ceiling bench train measures its matmuls against on a GPU (the
 * counterpart of kernels/cpu/blas_bench.h): what cuBLASLt's GEMM reaches on
 * the forward matmul's shape, through the backend's own pinned-algorithm
 * path (kernels/cuda/matmul_lt.h), with the operands the backend has and
 * with the ones it could have. */
#ifndef GD_KERNELS_CUDA_BLAS_BENCH_CUDA_H
#define GD_KERNELS_CUDA_BLAS_BENCH_CUDA_H

#include <stddef.h>

#include "common/status.h"
#include "kernels/backend.h"
#include "kernels/backend_registry.h"

/* TFLOP/s of out (m x n) = a (m x k) . b (n x k)^T on be's GPU and stream,
 * fp32 accumulation and output, repeated for at least min_seconds in each
 * form: fp32 operands with bf16 products (CUBLAS_COMPUTE_32F_FAST_16BF,
 * what the backend's matmuls run) and bf16 operands (CUDA_R_16BF, what they
 * would run with activations and weights kept in bf16). GD_ERR_NOMEM when
 * the operands do not fit the GPU. */
gd_status gd_cuda_gemm_ceiling(const gd_backend *be, gd_gemm_ceiling *out, size_t m, size_t n,
                               size_t k, double min_seconds) GD_MUST_CHECK;

#endif
