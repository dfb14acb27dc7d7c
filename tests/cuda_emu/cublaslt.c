/* The emulated cuBLASLt (tests/cuda_emu/README.md): libgd_cublas_emu.so,
 * loaded by the CUDA backend where it would load libcublasLt. Matmuls in
 * cuBLASLt's column-major terms, through its descriptors, heuristic and
 * caller-owned workspace. Under CUBLAS_COMPUTE_32F_FAST_16BF float inputs
 * are rounded to bf16 first, as tensor cores read them; bf16 inputs are
 * read as stored; the products are summed in float (OpenBLAS, fixed order
 * run to run).
 *
 * What a GPU would punish, or what would make the bits depend on more than
 * the shape, stops the process: an algorithm run on another shape than it
 * was chosen for, a pointer less aligned than it was chosen for, a
 * workspace smaller than it needs or not on the device, memory of another
 * device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <cublasLt.h>

#include "tests/cuda_emu/emu.h"

/* The entry points, with cuBLASLt's exported names. */
cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle);
size_t cublasLtGetVersion(void);
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType scale);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc);
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t bytes);
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout);
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t bytes);
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t bytes);
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int *returned);
cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              const void *alpha, const void *a, cublasLtMatrixLayout_t a_layout,
                              const void *b, cublasLtMatrixLayout_t b_layout, const void *beta,
                              const void *c, cublasLtMatrixLayout_t c_layout, void *d,
                              cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspace_bytes, cudaStream_t stream);

#define GD_EMU_LT_HANDLE 0x4C54u
#define GD_EMU_LT_DESC 0x4445u
#define GD_EMU_LT_LAYOUT 0x4C41u
#define GD_EMU_LT_PREF 0x5052u
#define GD_EMU_LT_ALGO 0x414C474Fu

/* The emulated algorithms' scratch: each needs this much of the caller's
 * workspace when the preference allows it, and scribbles over it, so a
 * workspace that is missing, too small or shared with live data shows. */
#define GD_EMU_LT_SCRATCH ((size_t)4096)

struct cublasLtContext {
    unsigned magic;
    int device;
};

/* The descriptors' contents, inside cuBLASLt's opaque sizes. */
typedef struct gd_emu_desc {
    unsigned magic;
    int32_t compute, scale, ta, tb;
} gd_emu_desc;
typedef struct gd_emu_layout {
    unsigned magic;
    int32_t type, batch;
    uint64_t rows, cols;
    int64_t ld, stride;
} gd_emu_layout;
typedef struct gd_emu_pref {
    unsigned magic;
    uint32_t align[4]; /* A, B, C, D: bytes the caller's pointers are aligned to */
    uint64_t max_workspace;
} gd_emu_pref;
/* What the heuristic hands out as an algorithm. */
typedef struct gd_emu_algo {
    uint32_t magic;
    uint32_t align[4];
    uint64_t shape; /* a digest of the descriptor and layouts it was chosen for */
    uint64_t workspace;
} gd_emu_algo;

_Static_assert(sizeof(gd_emu_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc");
_Static_assert(sizeof(gd_emu_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout");
_Static_assert(sizeof(gd_emu_pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "pref");
_Static_assert(sizeof(gd_emu_algo) <= sizeof(cublasLtMatmulAlgo_t), "algo");

static gd_emu_desc *gd_emu_desc_of(cublasLtMatmulDesc_t d) {
    gd_emu_desc *e = (gd_emu_desc *)d;
    return e != NULL && e->magic == GD_EMU_LT_DESC ? e : NULL;
}
static gd_emu_layout *gd_emu_layout_of(cublasLtMatrixLayout_t l) {
    gd_emu_layout *e = (gd_emu_layout *)l;
    return e != NULL && e->magic == GD_EMU_LT_LAYOUT ? e : NULL;
}
static gd_emu_pref *gd_emu_pref_of(cublasLtMatmulPreference_t p) {
    gd_emu_pref *e = (gd_emu_pref *)p;
    return e != NULL && e->magic == GD_EMU_LT_PREF ? e : NULL;
}
static bool gd_emu_handle_live(cublasLtHandle_t h) {
    return h != NULL && h->magic == GD_EMU_LT_HANDLE;
}

/* --- handle and descriptors -------------------------------------------------------------- */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
    /* One OpenBLAS thread, whatever the process set before: its threaded
     * sgemm may sum in another order, so a GEMM's bits would depend on
     * whether the host's CPU ops (which set one thread when first used)
     * had run yet. A GPU's bits do not depend on the host. */
    openblas_set_num_threads(1);
    struct cublasLtContext *h = malloc(sizeof *h);
    if (h == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *h = (struct cublasLtContext){.magic = GD_EMU_LT_HANDLE, .device = gd_emu_current_device()};
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->magic = 0; /* kept allocated: a later use is caught */
    return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) {
    return 130000;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType scale) {
    gd_emu_desc *d = calloc(1, sizeof(cublasLtMatmulDescOpaque_t));
    if (d == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *d = (gd_emu_desc){.magic = GD_EMU_LT_DESC, .compute = compute, .scale = scale};
    *desc = (cublasLtMatmulDesc_t)d;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    gd_emu_desc *d = gd_emu_desc_of(desc);
    if (d == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    d->magic = 0;
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t gd_emu_set_i32(int32_t *field, const void *buf, size_t bytes) {
    if (buf == NULL || bytes != sizeof *field)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, sizeof *field);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t bytes) {
    gd_emu_desc *d = gd_emu_desc_of(desc);
    if (d == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
        return gd_emu_set_i32(&d->ta, buf, bytes);
    case CUBLASLT_MATMUL_DESC_TRANSB:
        return gd_emu_set_i32(&d->tb, buf, bytes);
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED; /* not used by the backend */
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
    gd_emu_layout *l = calloc(1, sizeof(cublasLtMatrixLayoutOpaque_t));
    if (l == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *l = (gd_emu_layout){.magic = GD_EMU_LT_LAYOUT, .type = type, .batch = 1, .rows = rows,
                         .cols = cols, .ld = ld};
    *layout = (cublasLtMatrixLayout_t)l;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
    gd_emu_layout *l = gd_emu_layout_of(layout);
    if (l == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    l->magic = 0;
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t bytes) {
    gd_emu_layout *l = gd_emu_layout_of(layout);
    if (l == NULL || buf == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
        return gd_emu_set_i32(&l->batch, buf, bytes);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
        if (bytes != sizeof l->stride)
            return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&l->stride, buf, sizeof l->stride);
        return CUBLAS_STATUS_SUCCESS;
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
    gd_emu_pref *p = calloc(1, sizeof(cublasLtMatmulPreferenceOpaque_t));
    if (p == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    /* cuBLASLt's defaults: 256-byte alignment assumed, no workspace */
    *p = (gd_emu_pref){.magic = GD_EMU_LT_PREF, .align = {256, 256, 256, 256}};
    *pref = (cublasLtMatmulPreference_t)p;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
    gd_emu_pref *p = gd_emu_pref_of(pref);
    if (p == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    p->magic = 0;
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t bytes) {
    gd_emu_pref *p = gd_emu_pref_of(pref);
    if (p == NULL || buf == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (bytes != sizeof p->max_workspace)
            return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&p->max_workspace, buf, sizeof p->max_workspace);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (attr >= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
        attr <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES) {
        if (bytes != sizeof(uint32_t))
            return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&p->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf,
               sizeof(uint32_t));
        return CUBLAS_STATUS_SUCCESS;
    }
    if (attr == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK)
        return bytes == sizeof(uint32_t) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

/* --- the heuristic ---------------------------------------------------------------------- */

static size_t gd_emu_type_bytes(int32_t type) {
    return type == CUDA_R_32F ? 4 : type == CUDA_R_16BF ? 2 : 0;
}

static uint64_t gd_emu_mix(uint64_t h, uint64_t x) {
    for (int i = 0; i < 8; i++) {
        h ^= (x >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull; /* FNV-1a */
    }
    return h;
}

static uint64_t gd_emu_layout_digest(uint64_t h, const gd_emu_layout *l) {
    h = gd_emu_mix(h, (uint64_t)l->type);
    h = gd_emu_mix(h, l->rows);
    h = gd_emu_mix(h, l->cols);
    h = gd_emu_mix(h, (uint64_t)l->ld);
    h = gd_emu_mix(h, (uint64_t)l->batch);
    return gd_emu_mix(h, (uint64_t)l->stride);
}

static uint64_t gd_emu_shape_digest(const gd_emu_desc *d, const gd_emu_layout *a,
                                    const gd_emu_layout *b, const gd_emu_layout *c) {
    uint64_t h = 0xcbf29ce484222325ull;
    h = gd_emu_mix(h, (uint64_t)d->compute);
    h = gd_emu_mix(h, ((uint64_t)(uint32_t)d->ta << 32) | (uint32_t)d->tb);
    h = gd_emu_layout_digest(h, a);
    h = gd_emu_layout_digest(h, b);
    return gd_emu_layout_digest(h, c);
}

/* Whether the descriptor and layouts make a matmul the emulator runs: the
 * types the backend uses, op(A) (m x k) times op(B) (k x n) into C (m x n),
 * every ld covering its rows, one batch count. */
static bool gd_emu_shape_ok(const gd_emu_desc *d, const gd_emu_layout *a, const gd_emu_layout *b,
                            const gd_emu_layout *c) {
    if (a->type != b->type || gd_emu_type_bytes(a->type) == 0 || c->type != CUDA_R_32F)
        return false;
    bool fast = d->compute == CUBLAS_COMPUTE_32F_FAST_16BF;
    if ((d->compute != CUBLAS_COMPUTE_32F && !fast) || d->scale != CUDA_R_32F)
        return false;
    if ((d->ta != CUBLAS_OP_N && d->ta != CUBLAS_OP_T) ||
        (d->tb != CUBLAS_OP_N && d->tb != CUBLAS_OP_T))
        return false;
    uint64_t m = c->rows, n = c->cols;
    uint64_t am = d->ta ? a->cols : a->rows, ak = d->ta ? a->rows : a->cols;
    uint64_t bk = d->tb ? b->cols : b->rows, bn = d->tb ? b->rows : b->cols;
    if (am != m || bn != n || ak != bk || m > INT32_MAX || n > INT32_MAX || ak > INT32_MAX)
        return false;
    const gd_emu_layout *all[] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (all[i]->ld < (int64_t)(all[i]->rows > 1 ? all[i]->rows : 1) || all[i]->batch < 1 ||
            all[i]->stride < 0 || all[i]->batch != c->batch)
            return false;
    return true;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int *returned) {
    gd_emu_desc *dd = gd_emu_desc_of(desc);
    gd_emu_layout *la = gd_emu_layout_of(a), *lb = gd_emu_layout_of(b), *lc = gd_emu_layout_of(c),
                  *ld = gd_emu_layout_of(d);
    gd_emu_pref *p = gd_emu_pref_of(pref);
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (dd == NULL || la == NULL || lb == NULL || lc == NULL || ld == NULL || p == NULL ||
        requested < 1 || results == NULL || returned == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *returned = 0;
    if (!gd_emu_shape_ok(dd, la, lb, lc) || memcmp(lc, ld, sizeof *lc) != 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < 4; i++) {
        size_t elt = gd_emu_type_bytes(i < 2 ? la->type : lc->type);
        if (p->align[i] < elt || (p->align[i] & (p->align[i] - 1)) != 0)
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    gd_emu_algo algo = {.magic = GD_EMU_LT_ALGO,
                        .shape = gd_emu_shape_digest(dd, la, lb, lc),
                        .workspace = p->max_workspace >= GD_EMU_LT_SCRATCH ? GD_EMU_LT_SCRATCH : 0};
    memcpy(algo.align, p->align, sizeof algo.align);
    memset(&results[0], 0, sizeof results[0]);
    memcpy(&results[0].algo, &algo, sizeof algo);
    results[0].workspaceSize = algo.workspace;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* --- the matmul ------------------------------------------------------------------------- */

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

/* The elements one matrix of a layout spans. */
static size_t gd_emu_span(const gd_emu_layout *l) {
    return l->rows == 0 || l->cols == 0 ? 0 : (size_t)l->ld * (l->cols - 1) + l->rows;
}

/* A stored operand as floats, rounded to bf16 where the computation reads
 * bf16; NULL when not device memory of the device. */
static float *gd_emu_operand(const void *p, const gd_emu_layout *l, bool round, int device) {
    size_t count = gd_emu_span(l), elt = gd_emu_type_bytes(l->type);
    if (count > 0 && gd_emu_device_access(p, count * elt, false) != device)
        return NULL;
    float *out = malloc((count ? count : 1) * sizeof *out);
    if (out == NULL)
        gd_emu_fail("out of host memory for a matmul operand");
    for (size_t i = 0; i < count; i++) {
        float x = l->type == CUDA_R_32F ? ((const float *)p)[i] : gd_emu_bf16_read(p, i);
        out[i] = round ? gd_emu_bf16_round(x) : x;
    }
    return out;
}

/* One matrix of the batch: C = alpha op(A) op(B) + beta C. */
static void gd_emu_matmul_one(const gd_emu_desc *d, const gd_emu_layout *la, const void *a,
                              const gd_emu_layout *lb, const void *b, const gd_emu_layout *lc,
                              float *c, float alpha, float beta, int device) {
    int m = (int)lc->rows, n = (int)lc->cols, k = (int)(d->ta ? la->rows : la->cols);
    if (m == 0 || n == 0)
        return;
    bool round = d->compute == CUBLAS_COMPUTE_32F_FAST_16BF && la->type == CUDA_R_32F;
    float *ha = gd_emu_operand(a, la, round, device);
    float *hb = gd_emu_operand(b, lb, round, device);
    if (ha == NULL || hb == NULL ||
        gd_emu_device_access(c, gd_emu_span(lc) * sizeof(float), true) != device)
        gd_emu_fail("cublasLtMatmul(m %d, n %d, k %d): %s is not device memory of device %d "
                    "that holds it", m, n, k, ha == NULL ? "A" : hb == NULL ? "B" : "C", device);
    int ldc = (int)lc->ld;
    if (k == 0) {
        /* C = beta C; with beta 0, C is written without being read */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float *x = c + (size_t)j * ldc + i;
                *x = beta == 0.0f ? 0.0f : beta * *x;
            }
    } else {
        if (beta == 0.0f) /* C is not read when beta is 0: NaNs there do not leak */
            for (int j = 0; j < n; j++)
                memset(c + (size_t)j * ldc, 0, (size_t)m * sizeof(float));
        cblas_sgemm(CblasColMajor, d->ta ? CblasTrans : CblasNoTrans,
                    d->tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, ha, (int)la->ld, hb,
                    (int)lb->ld, beta, c, ldc);
    }
    free(ha);
    free(hb);
}

/* The largest power of two up to 256 (cudaMalloc's alignment) that divides p. */
static uint32_t gd_emu_alignment(const void *p) {
    uintptr_t u = (uintptr_t)p;
    uint32_t a = 256;
    while (a > 1 && u % a != 0)
        a /= 2;
    return a;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              const void *alpha, const void *a, cublasLtMatrixLayout_t a_layout,
                              const void *b, cublasLtMatrixLayout_t b_layout, const void *beta,
                              const void *c, cublasLtMatrixLayout_t c_layout, void *d,
                              cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspace_bytes, cudaStream_t stream) {
    gd_emu_desc *dd = gd_emu_desc_of(desc);
    gd_emu_layout *la = gd_emu_layout_of(a_layout), *lb = gd_emu_layout_of(b_layout),
                  *lc = gd_emu_layout_of(c_layout), *ld = gd_emu_layout_of(d_layout);
    if (!gd_emu_handle_live(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (dd == NULL || la == NULL || lb == NULL || lc == NULL || ld == NULL || alpha == NULL ||
        beta == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!gd_emu_shape_ok(dd, la, lb, lc) || memcmp(lc, ld, sizeof *lc) != 0 || c != d)
        return CUBLAS_STATUS_NOT_SUPPORTED; /* the backend multiplies in place */
    int device = gd_emu_current_device();
    if (device != handle->device || gd_emu_stream_device(stream) != device)
        gd_emu_fail("cublasLtMatmul on device %d with a handle of device %d and a stream of "
                    "device %d", device, handle->device, gd_emu_stream_device(stream));
    /* The backend always passes the algorithm it pinned for the shape. */
    gd_emu_algo al;
    if (algo == NULL)
        gd_emu_fail("cublasLtMatmul without an algorithm: cuBLASLt would choose one per call");
    memcpy(&al, algo, sizeof al);
    if (al.magic != GD_EMU_LT_ALGO)
        gd_emu_fail("cublasLtMatmul: the algorithm was not given by the heuristic");
    if (al.shape != gd_emu_shape_digest(dd, la, lb, lc))
        gd_emu_fail("cublasLtMatmul: an algorithm run on another shape than it was chosen for");
    const void *ptrs[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        if (gd_emu_alignment(ptrs[i]) < al.align[i])
            gd_emu_fail("cublasLtMatmul: %c is aligned to %u bytes, its algorithm was chosen "
                        "for %u", "ABCD"[i], gd_emu_alignment(ptrs[i]), al.align[i]);
    if (workspace_bytes < al.workspace)
        gd_emu_fail("cublasLtMatmul: a workspace of %zu bytes, its algorithm needs %llu",
                    workspace_bytes, (unsigned long long)al.workspace);
    float alf = *(const float *)alpha, bet = *(const float *)beta;
    size_t ab_elt = gd_emu_type_bytes(la->type);
    gd_emu_op_enter(stream, "cublasLtMatmul");
    if (al.workspace > 0) {
        if (gd_emu_device_access(workspace, al.workspace, true) != device)
            gd_emu_fail("cublasLtMatmul: the workspace is not device memory of device %d",
                        device);
        memset(workspace, 0xA5, al.workspace);
    }
    for (int i = 0; i < lc->batch; i++)
        gd_emu_matmul_one(dd, la, (const char *)a + (size_t)i * (size_t)la->stride * ab_elt, lb,
                          (const char *)b + (size_t)i * (size_t)lb->stride * ab_elt, lc,
                          (float *)d + (size_t)i * (size_t)lc->stride, alf, bet, device);
    gd_emu_device_leave();
    return CUBLAS_STATUS_SUCCESS;
}
