/* The backend registry (see kernels/backend_registry.h). */
#include "kernels/backend_registry.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cpu/identity.h"
#ifdef GD_HAVE_CUDA
#include "kernels/cuda/backend_cuda.h"
#include "kernels/cuda/blas_bench_cuda.h"
#endif

static const char *const gd_compiled[] = {
    "cpu",
#ifdef GD_HAVE_CUDA
    "cuda",
#endif
    NULL,
};

const char *const *gd_backend_compiled(void) {
    return gd_compiled;
}

bool gd_backend_usable(const char *name, char *why, size_t cap) {
    if (strcmp(name, "cpu") == 0) {
        snprintf(why, cap, "always");
        return true;
    }
    if (strcmp(name, "cuda") == 0) {
#ifdef GD_HAVE_CUDA
        return gd_backend_cuda_usable(why, cap);
#else
        snprintf(why, cap, "not compiled into this build (nvcc was not found)");
        return false;
#endif
    }
    snprintf(why, cap, "unknown backend (cpu, cuda)");
    return false;
}

const char *gd_backend_resolve(const char *name) {
    char why[256];
    if (strcmp(name, "auto") == 0)
        return gd_backend_usable("cuda", why, sizeof why) ? "cuda" : "cpu";
    return name;
}

gd_status gd_backend_open(gd_backend *out, const char *name, gd_pool *pool) {
    name = gd_backend_resolve(name);
    if (strcmp(name, "cpu") == 0) {
        gd_backend_cpu_init(out, pool);
        return GD_OK;
    }
    if (strcmp(name, "cuda") == 0) {
#ifdef GD_HAVE_CUDA
        return gd_backend_cuda_open(out, 0, pool);
#else
        return gd_fail(GD_ERR_INVALID, "backend cuda is not compiled into this build (nvcc "
                                       "was not found when it was built)");
#endif
    }
    return gd_fail(GD_ERR_INVALID, "unknown backend '%s' (cpu, cuda, auto)", name);
}

void gd_backend_close(gd_backend *be) {
    if (be == NULL || be->iface == NULL)
        return;
#ifdef GD_HAVE_CUDA
    if (strcmp(be->iface->name, "cuda") == 0)
        gd_backend_cuda_close(be);
#endif
    be->iface = NULL;
}

gd_status gd_backend_group_open(gd_backend_group *g, const char *name, size_t n,
                                gd_pool *pool) {
    memset(g, 0, sizeof *g);
    bool automatic = strcmp(name, "auto") == 0;
    name = gd_backend_resolve(name);
    if (n < 1 || n > GD_BACKEND_GROUP_MAX)
        return gd_fail(GD_ERR_INVALID, "--gpus %zu must be 1..%d", n, GD_BACKEND_GROUP_MAX);
    if (n == 1) {
        GD_TRY(gd_backend_open(&g->ranks[0], name, pool));
        g->n = 1;
        return GD_OK;
    }
    if (strcmp(name, "cuda") != 0) {
        if (strcmp(name, "cpu") != 0)
            return gd_backend_open(&g->ranks[0], name, pool); /* says what is wrong */
        return gd_fail(GD_ERR_INVALID, "%s takes one rank (--gpus 1), not %zu",
                       automatic ? "no GPU is usable here, and the cpu backend" : "the cpu backend",
                       n);
    }
#ifdef GD_HAVE_CUDA
    gd_status s = GD_OK;
    for (size_t r = 0; s == GD_OK && r < n; r++) {
        s = gd_backend_cuda_open(&g->ranks[r], (int)r, NULL);
        if (s == GD_OK)
            g->n = r + 1;
    }
    if (s == GD_OK)
        s = gd_collective_open(&g->coll, g->ranks, n, g->collective, sizeof g->collective);
    if (s != GD_OK)
        gd_backend_group_close(g);
    return s;
#else
    return gd_backend_open(&g->ranks[0], name, pool); /* not compiled: says so */
#endif
}

void gd_backend_group_close(gd_backend_group *g) {
    if (g == NULL)
        return;
    gd_collective_close(&g->coll);
    for (size_t r = 0; r < g->n; r++)
        gd_backend_close(&g->ranks[r]);
    memset(g, 0, sizeof *g);
}

gd_status gd_backend_identity(char *out, size_t cap, const char *name) {
    name = gd_backend_resolve(name);
    if (strcmp(name, "cpu") == 0)
        return gd_cpu_identity(out, cap);
    if (strcmp(name, "cuda") == 0) {
#ifdef GD_HAVE_CUDA
        return gd_backend_cuda_identity(out, cap, 0);
#else
        return gd_fail(GD_ERR_INVALID, "backend cuda is not compiled into this build (nvcc "
                                       "was not found when it was built)");
#endif
    }
    return gd_fail(GD_ERR_INVALID, "unknown backend '%s' (cpu, cuda, auto)", name);
}

gd_status gd_backend_memory(uint64_t *out, const char *name) {
    name = gd_backend_resolve(name);
    if (strcmp(name, "cpu") == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages <= 0 || page <= 0)
            return gd_fail(GD_ERR_IO, "the machine's memory cannot be read");
        *out = (uint64_t)pages * (uint64_t)page;
        return GD_OK;
    }
    if (strcmp(name, "cuda") == 0) {
#ifdef GD_HAVE_CUDA
        return gd_backend_cuda_memory(out, 0);
#else
        return gd_fail(GD_ERR_INVALID, "backend cuda is not compiled into this build (nvcc "
                                       "was not found when it was built)");
#endif
    }
    return gd_fail(GD_ERR_INVALID, "unknown backend '%s' (cpu, cuda, auto)", name);
}

gd_status gd_backend_gemm_ceiling(const gd_backend *be, gd_gemm_ceiling *out, size_t m, size_t n,
                                  size_t k, double min_seconds) {
#ifdef GD_HAVE_CUDA
    if (gd_backend_cuda_is(be))
        return gd_cuda_gemm_ceiling(be, out, m, n, k, min_seconds);
#else
    (void)m, (void)n, (void)k, (void)min_seconds, (void)out;
#endif
    return gd_fail(GD_ERR_INVALID, "backend %s has no GEMM ceiling of its own",
                   be->iface->name);
}
