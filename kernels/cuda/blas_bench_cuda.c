/* The GPU's GEMM ceiling (see kernels/cuda/blas_bench_cuda.h). */
#include "kernels/cuda/blas_bench_cuda.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/clock.h"
#include "kernels/cuda/backend_cuda.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/matmul_lt.h"

#define GD_GEMM_BENCH_WORKSPACE ((size_t)32 << 20) /* the backend's own size */

typedef struct gd_gemm_operands {
    cudaDataType type;
    const void *a, *b;
} gd_gemm_operands;

/* Column-major, as the backend calls it: out' (n x m) = b'^T (n x k) . a' (k x m),
 * through the backend's own path (the algorithm pinned for the shape). */
static void gd_gemm_bench_call(gd_lt *lt, cudaStream_t stream, float *out,
                               const gd_gemm_operands *op, int m, int n, int k) {
    gd_lt_gemm g = {.ta = CUBLAS_OP_T, .tb = CUBLAS_OP_N, .m = n, .n = m, .k = k, .lda = k,
                    .ldb = k, .ldc = n, .batch = 1, .ab_type = op->type};
    gd_lt_run(lt, stream, &g, 1.0f, op->b, op->a, 0.0f, out);
}

/* One warm-up call, then calls in doubling batches until min_seconds have
 * passed, waiting for the stream after each batch. */
static double gd_gemm_bench_tflops(gd_lt *lt, float *out, cudaStream_t stream,
                                   const gd_gemm_operands *op, int m, int n, int k,
                                   double min_seconds) {
    gd_gemm_bench_call(lt, stream, out, op, m, n, k);
    GD_CUDA_CHECK(cudaStreamSynchronize(stream));
    uint64_t calls = 0;
    double t0 = gd_clock_seconds(), elapsed = 0;
    for (uint64_t batch = 1; calls < 3 || elapsed < min_seconds; batch *= 2) {
        for (uint64_t i = 0; i < batch; i++)
            gd_gemm_bench_call(lt, stream, out, op, m, n, k);
        GD_CUDA_CHECK(cudaStreamSynchronize(stream));
        calls += batch;
        elapsed = gd_clock_seconds() - t0;
    }
    return 2.0 * m * (double)n * (double)k * (double)calls / elapsed * 1e-12;
}

static void *gd_gemm_bench_upload(cudaStream_t stream, const void *host, size_t bytes,
                                  bool *failed) {
    void *dev = NULL;
    if (*failed || cudaMalloc(&dev, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        *failed = true;
        return NULL;
    }
    GD_CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream));
    GD_CUDA_CHECK(cudaStreamSynchronize(stream)); /* the host frees its copy next */
    return dev;
}

gd_status gd_cuda_gemm_ceiling(const gd_backend *be, gd_gemm_ceiling *out, size_t m, size_t n,
                               size_t k, double min_seconds) {
    if (m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX ||
        m > SIZE_MAX / 4 / k || n > SIZE_MAX / 4 / k || m > SIZE_MAX / 4 / n)
        return gd_fail(GD_ERR_INVALID, "a GEMM of %zu x %zu x %zu is out of range", m, n, k);
    char why[256];
    const gd_cublaslt_api *api = gd_cublaslt_load(why, sizeof why);
    if (api == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "cuBLASLt: %s", why);
    GD_CUDA_CHECK(cudaSetDevice(gd_backend_cuda_device(be)));
    cudaStream_t stream = gd_backend_cuda_stream(be);
    /* The operands: small values, as a model's are, each a multiple of
     * 1/256 below 1/2 in magnitude, so that bf16 holds it exactly and its
     * bf16 form is its float's upper half. */
    size_t na = m * k, nb = n * k;
    float *host = malloc((na + nb) * sizeof(float));
    uint16_t *host16 = malloc((na + nb) * sizeof(uint16_t));
    if (host == NULL || host16 == NULL) {
        free(host);
        free(host16);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < na + nb; i++) {
        host[i] = (float)((int)((i * 7919) % 255) - 127) / 256.0f;
        uint32_t bits;
        memcpy(&bits, &host[i], 4);
        host16[i] = (uint16_t)(bits >> 16);
    }
    bool failed = false;
    void *a32 = gd_gemm_bench_upload(stream, host, na * 4, &failed);
    void *b32 = gd_gemm_bench_upload(stream, host + na, nb * 4, &failed);
    void *a16 = gd_gemm_bench_upload(stream, host16, na * 2, &failed);
    void *b16 = gd_gemm_bench_upload(stream, host16 + na, nb * 2, &failed);
    free(host);
    free(host16);
    void *c = NULL, *workspace = NULL;
    if (!failed && (cudaMalloc(&c, m * n * 4) != cudaSuccess ||
                    cudaMalloc(&workspace, GD_GEMM_BENCH_WORKSPACE) != cudaSuccess)) {
        (void)cudaGetLastError();
        failed = true;
    }
    gd_status s = GD_OK;
    if (failed) {
        s = gd_fail(GD_ERR_NOMEM, "out of GPU memory for a %zu x %zu x %zu GEMM", m, n, k);
    } else {
        gd_lt *lt = NULL;
        s = gd_lt_open(&lt, api, workspace, GD_GEMM_BENCH_WORKSPACE);
        if (s == GD_OK) {
            gd_gemm_operands fp32 = {CUDA_R_32F, a32, b32}, bf16 = {CUDA_R_16BF, a16, b16};
            out->fp32_operands_tflops =
                gd_gemm_bench_tflops(lt, c, stream, &fp32, (int)m, (int)n, (int)k, min_seconds);
            out->bf16_operands_tflops =
                gd_gemm_bench_tflops(lt, c, stream, &bf16, (int)m, (int)n, (int)k, min_seconds);
            gd_lt_close(lt);
        }
    }
    void *bufs[] = {a32, b32, a16, b16, c, workspace};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i] != NULL)
            GD_CUDA_CHECK(cudaFree(bufs[i]));
    return s;
}
