/* Loading a GPU library's entry points on first use, with dlopen, rather
 * than linking it (cuBLASLt and NCCL: kernels/cuda/cublaslt_lazy.h,
 * nccl_lazy.h): the libraries are large, most commands never touch a GPU,
 * and a host without one still runs every other command. */
#ifndef GD_KERNELS_CUDA_LIB_LAZY_H
#define GD_KERNELS_CUDA_LIB_LAZY_H

#include <stdbool.h>
#include <stddef.h>

/* One entry point: its name in the library and where its address goes. */
typedef struct gd_lazy_sym {
    const char *name;
    void **slot;
} gd_lazy_sym;

/* Opens soname from the system's search path (LD_LIBRARY_PATH,
 * ld.so.cache), else from dir (where the build found it), and fills every
 * slot. false, with the reason in why (cap bytes), when the library or one
 * of the names cannot be found. Not thread-safe: callers load once under
 * pthread_once. */
bool gd_lazy_load(const char *soname, const char *dir, const gd_lazy_sym *syms, size_t n,
                  char *why, size_t cap);

#endif
