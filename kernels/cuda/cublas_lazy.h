/* cuBLAS, loaded when the CUDA backend first opens rather than linked: the
 * library is hundreds of megabytes, and mapping it at every start of the
 * program (most commands never touch a GPU) cost about 0.3 s a run. Only
 * the entry points the backend calls are looked up. */
#ifndef GD_KERNELS_CUDA_CUBLAS_LAZY_H
#define GD_KERNELS_CUDA_CUBLAS_LAZY_H

#include <stddef.h>

#include <cublas_api.h>

typedef struct gd_cublas_api {
    cublasStatus_t (*create)(cublasHandle_t *handle);
    cublasStatus_t (*destroy)(cublasHandle_t handle);
    cublasStatus_t (*set_stream)(cublasHandle_t handle, cudaStream_t stream);
    cublasStatus_t (*set_workspace)(cublasHandle_t handle, void *workspace, size_t bytes);
    cublasStatus_t (*get_version)(cublasHandle_t handle, int *version);
    cublasStatus_t (*gemm_ex)(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const void *alpha,
                              const void *a, cudaDataType a_type, int lda, const void *b,
                              cudaDataType b_type, int ldb, const void *beta, void *c,
                              cudaDataType c_type, int ldc, cublasComputeType_t compute,
                              cublasGemmAlgo_t algo);
    cublasStatus_t (*gemm_strided_batched_ex)(
        cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
        int k, const void *alpha, const void *a, cudaDataType a_type, int lda,
        long long stride_a, const void *b, cudaDataType b_type, int ldb, long long stride_b,
        const void *beta, void *c, cudaDataType c_type, int ldc, long long stride_c, int batch,
        cublasComputeType_t compute, cublasGemmAlgo_t algo);
} gd_cublas_api;

/* The entry points, loaded once (thread-safe); NULL, with why, when the
 * library or one of them cannot be found. */
const gd_cublas_api *gd_cublas_load(char *why, size_t cap);

#endif
