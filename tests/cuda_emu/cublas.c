/* The emulated cuBLAS (tests/cuda_emu/README.md): libgd_cublas_emu.so,
 * loaded by the CUDA backend where it would load libcublas. GemmEx with
 * cuBLAS's column-major semantics; under CUBLAS_COMPUTE_32F_FAST_16BF the
 * inputs are rounded to bf16 first, as tensor cores read them, and the
 * products are summed in float (OpenBLAS, fixed order run to run). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <cublas_api.h>

#include "tests/cuda_emu/emu.h"

/* The entry points, with cuBLAS's exported names. */
cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes);
cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version);
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *a, cudaDataType a_type, int lda, const void *b,
                            cudaDataType b_type, int ldb, const void *beta, void *c,
                            cudaDataType c_type, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void *alpha, const void *a, cudaDataType a_type, int lda, long long stride_a,
    const void *b, cudaDataType b_type, int ldb, long long stride_b, const void *beta, void *c,
    cudaDataType c_type, int ldc, long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo);

#define GD_EMU_HANDLE_LIVE 0xB1A5u

struct cublasContext {
    unsigned magic;
    int device;
    cudaStream_t stream;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
    /* One OpenBLAS thread, whatever the process set before: its threaded
     * sgemm may sum in another order, so a GEMM's bits would depend on
     * whether the host's CPU ops (which set one thread when first used)
     * had run yet. A GPU's bits do not depend on the host. */
    openblas_set_num_threads(1);
    struct cublasContext *h = malloc(sizeof *h);
    if (h == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *h = (struct cublasContext){.magic = GD_EMU_HANDLE_LIVE, .device = gd_emu_current_device()};
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

static bool gd_emu_handle_live(cublasHandle_t h) {
    return h != NULL && h->magic == GD_EMU_HANDLE_LIVE;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->magic = 0; /* kept allocated: a later use is caught */
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int d = gd_emu_stream_device(stream);
    if (d < 0 || d != handle->device)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes) {
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    gd_emu_device_enter();
    int d = bytes == 0 ? handle->device : gd_emu_device_use(workspace, bytes);
    gd_emu_device_leave();
    return d == handle->device ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version) {
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *version = 130000;
    return CUBLAS_STATUS_SUCCESS;
}

/* float to bf16 and back: round to nearest even, NaN kept a NaN. */
static float gd_emu_bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0)
        u |= 0x00400000u;
    else
        u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

static float gd_emu_bf16_read(const void *p, size_t i) {
    uint16_t h;
    memcpy(&h, (const char *)p + 2 * i, sizeof h);
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* A stored (rows x cols, leading dimension ld) operand as floats, rounded to
 * bf16 where the computation reads bf16; NULL when not device memory. */
static float *gd_emu_operand(const void *p, cudaDataType type, int rows, int cols, int ld,
                             bool round, int device) {
    size_t count = cols == 0 || rows == 0 ? 0 : (size_t)ld * (size_t)(cols - 1) + (size_t)rows;
    size_t elt = type == CUDA_R_32F ? 4 : 2;
    if (count > 0 && gd_emu_device_use(p, count * elt) != device)
        return NULL;
    float *out = malloc((count ? count : 1) * sizeof *out);
    if (out == NULL)
        gd_emu_fail("out of host memory for a GEMM operand");
    for (size_t i = 0; i < count; i++) {
        float x = type == CUDA_R_32F ? ((const float *)p)[i] : gd_emu_bf16_read(p, i);
        out[i] = round ? gd_emu_bf16_round(x) : x;
    }
    return out;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *a, cudaDataType a_type, int lda, const void *b,
                            cudaDataType b_type, int ldb, const void *beta, void *c,
                            cudaDataType c_type, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
    (void)algo;
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (gd_emu_current_device() != handle->device)
        gd_emu_fail("cublasGemmEx on device %d with a handle of device %d",
                    gd_emu_current_device(), handle->device);
    bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    if (m < 0 || n < 0 || k < 0 || lda < (a_rows > 1 ? a_rows : 1) ||
        ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((a_type != CUDA_R_32F && a_type != CUDA_R_16BF) || a_type != b_type ||
        c_type != CUDA_R_32F || (compute != CUBLAS_COMPUTE_32F &&
                                 compute != CUBLAS_COMPUTE_32F_FAST_16BF))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    bool round = compute == CUBLAS_COMPUTE_32F_FAST_16BF && a_type == CUDA_R_32F;
    float al = *(const float *)alpha, be = *(const float *)beta;
    gd_emu_device_enter();
    size_t c_count = (size_t)ldc * (size_t)(n - 1) + (size_t)m;
    float *ha = gd_emu_operand(a, a_type, a_rows, a_cols, lda, round, handle->device);
    float *hb = gd_emu_operand(b, b_type, b_rows, b_cols, ldb, round, handle->device);
    if (ha == NULL || hb == NULL || gd_emu_device_use(c, c_count * sizeof(float)) != handle->device)
        gd_emu_fail("cublasGemmEx(m %d, n %d, k %d): %s is not device memory of device %d "
                    "that holds it", m, n, k, ha == NULL ? "A" : hb == NULL ? "B" : "C",
                    handle->device);
    if (k == 0) {
        /* C = beta C; with beta 0, C is written without being read */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float *x = (float *)c + (size_t)j * ldc + i;
                *x = be == 0.0f ? 0.0f : be * *x;
            }
    } else {
        if (be == 0.0f) /* cuBLAS does not read C when beta is 0: NaNs there do not leak */
            for (int j = 0; j < n; j++)
                memset((float *)c + (size_t)j * ldc, 0, (size_t)m * sizeof(float));
        cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    m, n, k, al, ha, lda, hb, ldb, be, c, ldc);
    }
    gd_emu_device_leave();
    free(ha);
    free(hb);
    return CUBLAS_STATUS_SUCCESS;
}

/* Each of the batch's GEMMs in turn; strides count elements, as cuBLAS's. */
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void *alpha, const void *a, cudaDataType a_type, int lda, long long stride_a,
    const void *b, cudaDataType b_type, int ldb, long long stride_b, const void *beta, void *c,
    cudaDataType c_type, int ldc, long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) {
    if (batch < 0 || stride_a < 0 || stride_b < 0 || stride_c < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    size_t ab_elt = a_type == CUDA_R_32F ? 4 : 2, c_elt = c_type == CUDA_R_32F ? 4 : 2;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t st = cublasGemmEx(
            handle, transa, transb, m, n, k, alpha, (const char *)a + (size_t)i * stride_a * ab_elt,
            a_type, lda, (const char *)b + (size_t)i * stride_b * ab_elt, b_type, ldb, beta,
            (char *)c + (size_t)i * stride_c * c_elt, c_type, ldc, compute, algo);
        if (st != CUBLAS_STATUS_SUCCESS)
            return st;
    }
    return CUBLAS_STATUS_SUCCESS;
}
