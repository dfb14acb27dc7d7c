/* cuBLAS loaded on first use (see kernels/cuda/cublas_lazy.h). */
#include "kernels/cuda/cublas_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t gd_cublas_once = PTHREAD_ONCE_INIT;
static gd_cublas_api gd_cublas;
static const gd_cublas_api *gd_cublas_loaded;
static char gd_cublas_why[256];

static void *gd_cublas_sym(void *lib, const char *name, bool *ok) {
    void *p = dlsym(lib, name);
    if (p == NULL && *ok) {
        snprintf(gd_cublas_why, sizeof gd_cublas_why, "%s has no %s", GD_CUBLAS_SONAME, name);
        *ok = false;
    }
    return p;
}

static void gd_cublas_load_once(void) {
    /* The system's search path first (LD_LIBRARY_PATH, ld.so.cache), then
     * the toolkit this was built against. */
    void *lib = dlopen(GD_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        lib = dlopen(GD_CUBLAS_DIR "/" GD_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(gd_cublas_why, sizeof gd_cublas_why, "cannot load %s: %s", GD_CUBLAS_SONAME,
                 dlerror());
        return;
    }
    bool ok = true;
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
    *(void **)&gd_cublas.create = gd_cublas_sym(lib, "cublasCreate_v2", &ok);
    *(void **)&gd_cublas.destroy = gd_cublas_sym(lib, "cublasDestroy_v2", &ok);
    *(void **)&gd_cublas.set_stream = gd_cublas_sym(lib, "cublasSetStream_v2", &ok);
    *(void **)&gd_cublas.set_workspace = gd_cublas_sym(lib, "cublasSetWorkspace_v2", &ok);
    *(void **)&gd_cublas.get_version = gd_cublas_sym(lib, "cublasGetVersion_v2", &ok);
    *(void **)&gd_cublas.gemm_ex = gd_cublas_sym(lib, "cublasGemmEx", &ok);
    if (ok)
        gd_cublas_loaded = &gd_cublas;
}

const gd_cublas_api *gd_cublas_load(char *why, size_t cap) {
    pthread_once(&gd_cublas_once, gd_cublas_load_once);
    if (gd_cublas_loaded == NULL)
        snprintf(why, cap, "%s", gd_cublas_why);
    return gd_cublas_loaded;
}
