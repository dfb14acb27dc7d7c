/* GEMMs with the algorithm pinned per shape (see kernels/cuda/matmul_lt.h). */
#include "kernels/cuda/matmul_lt.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_check.h"

/* What decides the algorithm: the shape and types, and the alignment of
 * each operand (the largest of 16, 8, 4, 2 bytes its pointer, leading
 * dimension and batch stride share). Laid out without padding, so keys
 * compare as bytes. */
typedef struct gd_lt_key {
    gd_lt_gemm g;
    uint32_t align[4]; /* A, B, C, D (D is C: the GEMMs run in place) */
} gd_lt_key;
_Static_assert(sizeof(gd_lt_key) == 10 * sizeof(int) + 3 * sizeof(long long) +
                                        4 * sizeof(uint32_t),
               "a GEMM plan's key has no padding");

typedef struct gd_lt_plan {
    gd_lt_key key;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
} gd_lt_plan;

struct gd_lt {
    const gd_cublaslt_api *api;
    cublasLtHandle_t handle;
    void *workspace;
    size_t workspace_bytes;
    gd_lt_plan **plans;
    size_t count, cap;
};

gd_status gd_lt_open(gd_lt **out, const gd_cublaslt_api *api, void *workspace,
                     size_t workspace_bytes) {
    gd_lt *lt = calloc(1, sizeof *lt);
    if (lt == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    *lt = (gd_lt){.api = api, .workspace = workspace, .workspace_bytes = workspace_bytes};
    GD_CUBLAS_CHECK(api->create(&lt->handle));
    *out = lt;
    return GD_OK;
}

static void gd_lt_plan_free(const gd_cublaslt_api *api, gd_lt_plan *p) {
    if (p->desc != NULL)
        GD_CUBLAS_CHECK(api->desc_destroy(p->desc));
    cublasLtMatrixLayout_t layouts[] = {p->a, p->b, p->c};
    for (size_t i = 0; i < 3; i++)
        if (layouts[i] != NULL)
            GD_CUBLAS_CHECK(api->layout_destroy(layouts[i]));
    free(p);
}

void gd_lt_close(gd_lt *lt) {
    if (lt == NULL)
        return;
    for (size_t i = 0; i < lt->count; i++)
        gd_lt_plan_free(lt->api, lt->plans[i]);
    free(lt->plans);
    GD_CUBLAS_CHECK(lt->api->destroy(lt->handle));
    free(lt);
}

size_t gd_lt_plans(const gd_lt *lt) {
    return lt->count;
}

static uint32_t gd_lt_alignment(const void *p, int ld, long long stride, int batch,
                                size_t elt) {
    uint64_t bits = (uint64_t)(uintptr_t)p | (uint64_t)ld * elt;
    if (batch > 1)
        bits |= (uint64_t)stride * elt;
    uint32_t a = 16;
    while (a > elt && bits % a != 0)
        a /= 2;
    return a;
}

static cublasLtMatrixLayout_t gd_lt_layout(const gd_cublaslt_api *api, cudaDataType type,
                                           int rows, int cols, int ld, int batch,
                                           long long stride) {
    cublasLtMatrixLayout_t l;
    GD_CUBLAS_CHECK(api->layout_create(&l, type, (uint64_t)rows, (uint64_t)cols, ld));
    if (batch > 1) {
        int32_t count = batch;
        int64_t offset = stride;
        GD_CUBLAS_CHECK(api->layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                        sizeof count));
        GD_CUBLAS_CHECK(api->layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset,
                                        sizeof offset));
    }
    return l;
}

/* The shape's descriptors and the heuristic's first algorithm for them,
 * given the workspace and alignments. No algorithm is a local failure: the
 * shapes the backend asks for are all plain GEMMs. */
static gd_lt_plan *gd_lt_plan_make(gd_lt *lt, const gd_lt_key *key) {
    const gd_cublaslt_api *api = lt->api;
    const gd_lt_gemm *g = &key->g;
    gd_lt_plan *p = calloc(1, sizeof *p);
    if (p == NULL)
        GD_CUDA_FAIL("cuBLASLt", "calloc", "out of host memory for a GEMM plan");
    p->key = *key;
    cublasComputeType_t compute =
        g->ab_type == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F;
    GD_CUBLAS_CHECK(api->desc_create(&p->desc, compute, CUDA_R_32F));
    int32_t ta = g->ta, tb = g->tb;
    GD_CUBLAS_CHECK(api->desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    GD_CUBLAS_CHECK(api->desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    bool at = g->ta != CUBLAS_OP_N, bt = g->tb != CUBLAS_OP_N;
    p->a = gd_lt_layout(api, g->ab_type, at ? g->k : g->m, at ? g->m : g->k, g->lda, g->batch,
                        g->stride_a);
    p->b = gd_lt_layout(api, g->ab_type, bt ? g->n : g->k, bt ? g->k : g->n, g->ldb, g->batch,
                        g->stride_b);
    p->c = gd_lt_layout(api, CUDA_R_32F, g->m, g->n, g->ldc, g->batch, g->stride_c);
    cublasLtMatmulPreference_t pref;
    GD_CUBLAS_CHECK(api->pref_create(&pref));
    uint64_t ws = lt->workspace_bytes;
    GD_CUBLAS_CHECK(api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (size_t i = 0; i < 4; i++) {
        GD_CUBLAS_CHECK(api->pref_set(pref, align_attr[i], &key->align[i], sizeof key->align[i]));
    }
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    GD_CUBLAS_CHECK(api->heuristic(lt->handle, p->desc, p->a, p->b, p->c, p->c, pref, 1, &result,
                                   &found));
    GD_CUBLAS_CHECK(api->pref_destroy(pref));
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
        GD_CUDA_FAIL("cuBLASLt", "cublasLtMatmulAlgoGetHeuristic",
                     "no algorithm for a GEMM shape the backend uses");
    p->algo = result.algo;
    return p;
}

static gd_lt_plan *gd_lt_plan_for(gd_lt *lt, const gd_lt_key *key) {
    for (size_t i = 0; i < lt->count; i++)
        if (memcmp(&lt->plans[i]->key, key, sizeof *key) == 0)
            return lt->plans[i];
    if (lt->count == lt->cap) {
        size_t cap = lt->cap ? 2 * lt->cap : 16;
        gd_lt_plan **plans = realloc(lt->plans, cap * sizeof *plans);
        if (plans == NULL)
            GD_CUDA_FAIL("cuBLASLt", "realloc", "out of host memory for GEMM plans");
        lt->plans = plans;
        lt->cap = cap;
    }
    gd_lt_plan *p = gd_lt_plan_make(lt, key);
    lt->plans[lt->count++] = p;
    return p;
}

void gd_lt_run(gd_lt *lt, cudaStream_t stream, const gd_lt_gemm *g, float alpha, const void *a,
               const void *b, float beta, float *c) {
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return;
    gd_lt_key key;
    memset(&key, 0, sizeof key);
    key.g.ta = g->ta;
    key.g.tb = g->tb;
    key.g.m = g->m;
    key.g.n = g->n;
    key.g.k = g->k;
    key.g.lda = g->lda;
    key.g.ldb = g->ldb;
    key.g.ldc = g->ldc;
    key.g.batch = g->batch;
    if (g->batch > 1) {
        key.g.stride_a = g->stride_a;
        key.g.stride_b = g->stride_b;
        key.g.stride_c = g->stride_c;
    }
    key.g.ab_type = g->ab_type;
    size_t ab = g->ab_type == CUDA_R_32F ? 4 : 2;
    key.align[0] = gd_lt_alignment(a, g->lda, g->stride_a, g->batch, ab);
    key.align[1] = gd_lt_alignment(b, g->ldb, g->stride_b, g->batch, ab);
    key.align[2] = gd_lt_alignment(c, g->ldc, g->stride_c, g->batch, 4);
    key.align[3] = key.align[2];
    gd_lt_plan *p = gd_lt_plan_for(lt, &key);
    GD_CUBLAS_CHECK(lt->api->matmul(lt->handle, p->desc, &alpha, a, p->a, b, p->b, &beta, c, p->c,
                                    c, p->c, &p->algo, lt->workspace, lt->workspace_bytes,
                                    stream));
}
