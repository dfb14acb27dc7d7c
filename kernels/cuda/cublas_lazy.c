/* cuBLAS loaded on first use (see kernels/cuda/cublas_lazy.h). */
#include "kernels/cuda/cublas_lazy.h"

#include <pthread.h>
#include <stdio.h>

#include "kernels/cuda/lib_lazy.h"

static pthread_once_t gd_cublas_once = PTHREAD_ONCE_INIT;
static gd_cublas_api gd_cublas;
static const gd_cublas_api *gd_cublas_loaded;
static char gd_cublas_why[256];

static void gd_cublas_load_once(void) {
    const gd_lazy_sym syms[] = {
        {"cublasCreate_v2", (void **)&gd_cublas.create},
        {"cublasDestroy_v2", (void **)&gd_cublas.destroy},
        {"cublasSetStream_v2", (void **)&gd_cublas.set_stream},
        {"cublasSetWorkspace_v2", (void **)&gd_cublas.set_workspace},
        {"cublasGetVersion_v2", (void **)&gd_cublas.get_version},
        {"cublasGemmEx", (void **)&gd_cublas.gemm_ex},
        {"cublasGemmStridedBatchedEx", (void **)&gd_cublas.gemm_strided_batched_ex},
    };
    if (gd_lazy_load(GD_CUBLAS_SONAME, GD_CUBLAS_DIR, syms, sizeof syms / sizeof syms[0],
                     gd_cublas_why, sizeof gd_cublas_why))
        gd_cublas_loaded = &gd_cublas;
}

const gd_cublas_api *gd_cublas_load(char *why, size_t cap) {
    pthread_once(&gd_cublas_once, gd_cublas_load_once);
    if (gd_cublas_loaded == NULL)
        snprintf(why, cap, "%s", gd_cublas_why);
    return gd_cublas_loaded;
}
