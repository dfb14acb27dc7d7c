/* cuBLASLt loaded on first use (see kernels/cuda/cublaslt_lazy.h). */
#include "kernels/cuda/cublaslt_lazy.h"

#include <pthread.h>
#include <stdio.h>

#include "kernels/cuda/lib_lazy.h"

static pthread_once_t gd_cublaslt_once = PTHREAD_ONCE_INIT;
static gd_cublaslt_api gd_cublaslt;
static const gd_cublaslt_api *gd_cublaslt_loaded;
static char gd_cublaslt_why[256];

static void gd_cublaslt_load_once(void) {
    const gd_lazy_sym syms[] = {
        {"cublasLtCreate", (void **)&gd_cublaslt.create},
        {"cublasLtDestroy", (void **)&gd_cublaslt.destroy},
        {"cublasLtGetVersion", (void **)&gd_cublaslt.get_version},
        {"cublasLtMatmulDescCreate", (void **)&gd_cublaslt.desc_create},
        {"cublasLtMatmulDescDestroy", (void **)&gd_cublaslt.desc_destroy},
        {"cublasLtMatmulDescSetAttribute", (void **)&gd_cublaslt.desc_set},
        {"cublasLtMatrixLayoutCreate", (void **)&gd_cublaslt.layout_create},
        {"cublasLtMatrixLayoutDestroy", (void **)&gd_cublaslt.layout_destroy},
        {"cublasLtMatrixLayoutSetAttribute", (void **)&gd_cublaslt.layout_set},
        {"cublasLtMatmulPreferenceCreate", (void **)&gd_cublaslt.pref_create},
        {"cublasLtMatmulPreferenceDestroy", (void **)&gd_cublaslt.pref_destroy},
        {"cublasLtMatmulPreferenceSetAttribute", (void **)&gd_cublaslt.pref_set},
        {"cublasLtMatmulAlgoGetHeuristic", (void **)&gd_cublaslt.heuristic},
        {"cublasLtMatmul", (void **)&gd_cublaslt.matmul},
    };
    if (gd_lazy_load(GD_CUBLASLT_SONAME, GD_CUBLAS_DIR, syms, sizeof syms / sizeof syms[0],
                     gd_cublaslt_why, sizeof gd_cublaslt_why))
        gd_cublaslt_loaded = &gd_cublaslt;
}

const gd_cublaslt_api *gd_cublaslt_load(char *why, size_t cap) {
    pthread_once(&gd_cublaslt_once, gd_cublaslt_load_once);
    if (gd_cublaslt_loaded == NULL)
        snprintf(why, cap, "%s", gd_cublaslt_why);
    return gd_cublaslt_loaded;
}
