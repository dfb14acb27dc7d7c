/* The backends this build has, by name, and the one place that opens them:
 * "cpu" always, "cuda" where nvcc was found at build time (CMake option
 * GD_CUDA) and a GPU is usable at run time. The command line's --backend
 * and node.yaml's `backend` take these names, and "auto" (cuda when usable,
 * else cpu). */
#ifndef GD_KERNELS_BACKEND_REGISTRY_H
#define GD_KERNELS_BACKEND_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/pool.h"
#include "common/status.h"
#include "kernels/backend.h"
#include "kernels/collective.h"

/* The names compiled into this build, in a fixed order; NULL-terminated. */
const char *const *gd_backend_compiled(void);

/* true if name is compiled in and can run here; else false and why. */
bool gd_backend_usable(const char *name, char *why, size_t cap);

/* Opens the backend `name` ("cpu", "cuda", or "auto") over pool (borrowed,
 * may be NULL; it runs the CPU backend's ops and every fallback). A name
 * not compiled in is GD_ERR_INVALID, one that cannot run here
 * GD_ERR_NOT_FOUND, each with the reason. */
gd_status gd_backend_open(gd_backend *out, const char *name, gd_pool *pool) GD_MUST_CHECK;
/* Releases what gd_backend_open took (nothing for the CPU backend). */
void gd_backend_close(gd_backend *be);

/* Backends of one kind for data parallelism (trainer/train.h's ranks):
 * "cuda" opens GPUs 0..n-1, each with its own stream and cuBLAS, and the
 * collective between them (NCCL where it loads, else through host memory);
 * "cpu" is one rank only (its threads already share one memory). With one
 * rank the backend gets pool; with several, none (each rank computes on a
 * thread of its own). GD_ERR_INVALID for n outside 1..GD_BACKEND_GROUP_MAX
 * or more GPUs than the host has, else the errors of gd_backend_open. */
#define GD_BACKEND_GROUP_MAX 16
typedef struct gd_backend_group {
    gd_backend ranks[GD_BACKEND_GROUP_MAX];
    size_t n;
    gd_collective coll;   /* open when n > 1 */
    char collective[300]; /* which: "nccl", or "host (why not NCCL)"; "" with one rank */
} gd_backend_group;
gd_status gd_backend_group_open(gd_backend_group *g, const char *name, size_t n,
                                gd_pool *pool) GD_MUST_CHECK;
void gd_backend_group_close(gd_backend_group *g); /* a zeroed g is a no-op */

/* The backend a name stands for: "auto" is "cuda" where it is usable, else
 * "cpu"; any other name is itself. */
const char *gd_backend_resolve(const char *name);

/* What decides the bits of backend `name`'s results (kernels/cpu/identity.h
 * for the CPU), for the hardware class, without opening it. The errors of
 * gd_backend_open. */
gd_status gd_backend_identity(char *out, size_t cap, const char *name) GD_MUST_CHECK;

/* The memory one rank of backend `name` has: a GPU's (device 0), or for
 * the CPU the machine's physical memory. The errors of gd_backend_open. */
gd_status gd_backend_memory(uint64_t *out, const char *name) GD_MUST_CHECK;

/* What a device backend's BLAS reaches on the forward matmul's shape, out
 * (m x n) = a (m x k) . b (n x k)^T, for bench train to set its matmuls
 * against (kernels/cuda/blas_bench_cuda.h), each form timed for at least
 * min_seconds. GD_ERR_INVALID for a backend without one: the CPU's ceiling
 * is OpenBLAS's own sgemm (kernels/cpu/blas_bench.h). */
typedef struct gd_gemm_ceiling {
    double fp32_operands_tflops; /* fp32 operands, bf16 products: what the backend runs */
    double bf16_operands_tflops; /* bf16 operands: what bf16 activations would run */
} gd_gemm_ceiling;
gd_status gd_backend_gemm_ceiling(const gd_backend *be, gd_gemm_ceiling *out, size_t m, size_t n,
                                  size_t k, double min_seconds) GD_MUST_CHECK;

#endif
