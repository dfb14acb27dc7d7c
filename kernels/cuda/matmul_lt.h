/* The CUDA backend's GEMMs, through cuBLASLt with the algorithm pinned per
 * shape (docs/trainer.md, "Bits on a GPU").
 *
 * cuBLAS picks an algorithm for each call from the shape, the pointers'
 * alignment and the workspace it may use; the algorithm (tiling, split-K,
 * reduction order) decides the bits. Here the choice is made once per
 * shape by cuBLASLt's heuristic, with a fixed, caller-owned workspace and
 * the alignment the shape's operands have, and then kept: every later GEMM
 * of that shape runs the same algorithm, so a re-execution on the same
 * hardware class (same GPU, driver, CUDA and cuBLAS, which the class
 * names) gives the same bits, whatever else ran before it. One context
 * serves one backend: one stream, used by one thread at a time. */
#ifndef GD_KERNELS_CUDA_MATMUL_LT_H
#define GD_KERNELS_CUDA_MATMUL_LT_H

#include <stddef.h>

#include "common/status.h"
#include "kernels/cuda/cublaslt_lazy.h"

/* One GEMM, or a batch of them, in cuBLAS's column-major terms:
 * C (m x n) = alpha op(A) op(B) + beta C, op(A) (m x k), op(B) (k x n), with
 * leading dimensions and, for a batch, strides between its matrices (in
 * elements). A and B are ab_type: CUDA_R_32F (tensor cores read them as
 * bf16, CUBLAS_COMPUTE_32F_FAST_16BF) or CUDA_R_16BF; C is float. The sum
 * is float either way. */
typedef struct gd_lt_gemm {
    cublasOperation_t ta, tb;
    int m, n, k;
    int lda, ldb, ldc;
    int batch; /* 1 for a single GEMM */
    cudaDataType ab_type;
    long long stride_a, stride_b, stride_c;
} gd_lt_gemm;

typedef struct gd_lt gd_lt;

/* A context over api with the caller's workspace (device memory of the
 * current device, workspace_bytes, kept for the context's life). */
gd_status gd_lt_open(gd_lt **out, const gd_cublaslt_api *api, void *workspace,
                     size_t workspace_bytes);
void gd_lt_close(gd_lt *lt);

/* Runs g on stream: the shape's pinned algorithm, chosen on its first use.
 * A failure of cuBLASLt is a local failure and stops the process
 * (kernels/cuda/cuda_check.h). */
void gd_lt_run(gd_lt *lt, cudaStream_t stream, const gd_lt_gemm *g, float alpha, const void *a,
               const void *b, float beta, float *c);

/* How many shapes have an algorithm pinned. */
size_t gd_lt_plans(const gd_lt *lt);

#endif
