/* Loading a library's entry points (see kernels/cuda/lib_lazy.h). */
#include "kernels/cuda/lib_lazy.h"

#include <dlfcn.h>
#include <stdio.h>

bool gd_lazy_load(const char *soname, const char *dir, const gd_lazy_sym *syms, size_t n,
                  char *why, size_t cap) {
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, soname);
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == NULL) {
        snprintf(why, cap, "cannot load %s: %s", soname, dlerror());
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        /* dlsym returns void *; POSIX guarantees it converts to a function
         * pointer, which the slots are. */
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (*syms[i].slot == NULL) {
            snprintf(why, cap, "%s has no %s", soname, syms[i].name);
            return false;
        }
    }
    return true;
}
