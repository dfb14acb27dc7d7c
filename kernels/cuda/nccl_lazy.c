/* NCCL loaded on first use (see kernels/cuda/nccl_lazy.h). */
#include "kernels/cuda/nccl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t gd_nccl_once = PTHREAD_ONCE_INIT;
static gd_nccl_api gd_nccl;
static const gd_nccl_api *gd_nccl_loaded;
static char gd_nccl_why[256];

static void *gd_nccl_sym(void *lib, const char *name, bool *ok) {
    void *p = dlsym(lib, name);
    if (p == NULL && *ok) {
        snprintf(gd_nccl_why, sizeof gd_nccl_why, "%s has no %s", GD_NCCL_SONAME, name);
        *ok = false;
    }
    return p;
}

static void gd_nccl_load_once(void) {
    /* The system's search path first (LD_LIBRARY_PATH, ld.so.cache), then
     * where the build found it, usually the toolkit's library directory. */
    void *lib = dlopen(GD_NCCL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        lib = dlopen(GD_NCCL_DIR "/" GD_NCCL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(gd_nccl_why, sizeof gd_nccl_why, "cannot load %s: %s", GD_NCCL_SONAME,
                 dlerror());
        return;
    }
    bool ok = true;
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
    *(void **)&gd_nccl.comm_init_all = gd_nccl_sym(lib, "ncclCommInitAll", &ok);
    *(void **)&gd_nccl.comm_destroy = gd_nccl_sym(lib, "ncclCommDestroy", &ok);
    *(void **)&gd_nccl.group_start = gd_nccl_sym(lib, "ncclGroupStart", &ok);
    *(void **)&gd_nccl.group_end = gd_nccl_sym(lib, "ncclGroupEnd", &ok);
    *(void **)&gd_nccl.send = gd_nccl_sym(lib, "ncclSend", &ok);
    *(void **)&gd_nccl.recv = gd_nccl_sym(lib, "ncclRecv", &ok);
    *(void **)&gd_nccl.get_error_string = gd_nccl_sym(lib, "ncclGetErrorString", &ok);
    *(void **)&gd_nccl.get_version = gd_nccl_sym(lib, "ncclGetVersion", &ok);
    if (ok)
        gd_nccl_loaded = &gd_nccl;
}

const gd_nccl_api *gd_nccl_load(char *why, size_t cap) {
    pthread_once(&gd_nccl_once, gd_nccl_load_once);
    if (gd_nccl_loaded == NULL)
        snprintf(why, cap, "%s", gd_nccl_why);
    return gd_nccl_loaded;
}

const char *gd_nccl_error_string(int result) {
    pthread_once(&gd_nccl_once, gd_nccl_load_once);
    if (gd_nccl_loaded == NULL)
        return "NCCL is not loaded";
    return gd_nccl_loaded->get_error_string((ncclResult_t)result);
}
