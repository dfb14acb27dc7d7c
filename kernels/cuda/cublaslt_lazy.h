/* cuBLASLt, loaded when the CUDA backend first opens rather than linked
 * (see kernels/cuda/cublas_lazy.h for why). The backend's GEMMs go through
 * it (kernels/cuda/matmul_lt.h): its descriptors let the algorithm be
 * chosen once per shape and pinned. Only the entry points used are looked
 * up. */
#ifndef GD_KERNELS_CUDA_CUBLASLT_LAZY_H
#define GD_KERNELS_CUDA_CUBLASLT_LAZY_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>

typedef struct gd_cublaslt_api {
    cublasStatus_t (*create)(cublasLtHandle_t *handle);
    cublasStatus_t (*destroy)(cublasLtHandle_t handle);
    size_t (*get_version)(void);
    cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                  cudaDataType scale);
    cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t desc);
    cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t bytes);
    cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                    uint64_t rows, uint64_t cols, int64_t ld);
    cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t layout);
    cublasStatus_t (*layout_set)(cublasLtMatrixLayout_t layout,
                                 cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                 size_t bytes);
    cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t *pref);
    cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t pref);
    cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t pref,
                               cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                               size_t bytes);
    cublasStatus_t (*heuristic)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                cublasLtMatmulPreference_t pref, int requested,
                                cublasLtMatmulHeuristicResult_t results[], int *returned);
    cublasStatus_t (*matmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                             const void *alpha, const void *a, cublasLtMatrixLayout_t a_layout,
                             const void *b, cublasLtMatrixLayout_t b_layout, const void *beta,
                             const void *c, cublasLtMatrixLayout_t c_layout, void *d,
                             cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t *algo,
                             void *workspace, size_t workspace_bytes, cudaStream_t stream);
} gd_cublaslt_api;

/* The entry points, loaded once (thread-safe); NULL, with why, when the
 * library or one of them cannot be found. */
const gd_cublaslt_api *gd_cublaslt_load(char *why, size_t cap);

#endif
