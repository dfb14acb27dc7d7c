/* NCCL loaded on first use (see kernels/cuda/nccl_lazy.h). */
#include "kernels/cuda/nccl_lazy.h"

#include <pthread.h>
#include <stdio.h>

#include "kernels/cuda/lib_lazy.h"

static pthread_once_t gd_nccl_once = PTHREAD_ONCE_INIT;
static gd_nccl_api gd_nccl;
static const gd_nccl_api *gd_nccl_loaded;
static char gd_nccl_why[256];

static void gd_nccl_load_once(void) {
    const gd_lazy_sym syms[] = {
        {"ncclCommInitAll", (void **)&gd_nccl.comm_init_all},
        {"ncclCommDestroy", (void **)&gd_nccl.comm_destroy},
        {"ncclGroupStart", (void **)&gd_nccl.group_start},
        {"ncclGroupEnd", (void **)&gd_nccl.group_end},
        {"ncclSend", (void **)&gd_nccl.send},
        {"ncclRecv", (void **)&gd_nccl.recv},
        {"ncclGetErrorString", (void **)&gd_nccl.get_error_string},
        {"ncclGetVersion", (void **)&gd_nccl.get_version},
    };
    if (gd_lazy_load(GD_NCCL_SONAME, GD_NCCL_DIR, syms, sizeof syms / sizeof syms[0],
                     gd_nccl_why, sizeof gd_nccl_why))
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
