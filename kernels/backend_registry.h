/* The backends this build has, by name, and the one place that opens them:
 * "cpu" always, "cuda" where nvcc was found at build time (CMake option
 * GD_CUDA) and a GPU is usable at run time. The command line's --backend
 * and node.yaml's `backend` take these names, and "auto" (cuda when usable,
 * else cpu). */
#ifndef GD_KERNELS_BACKEND_REGISTRY_H
#define GD_KERNELS_BACKEND_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/pool.h"
#include "common/status.h"
#include "kernels/backend.h"

/* The names compiled into this build, in a fixed order; NULL-terminated. */
const char *const *gd_backend_compiled(void);

/* true if name is compiled in and can run here; else false and why. */
bool gd_backend_usable(const char *name, char *why, size_t cap);

/* Opens the backend `name` ("cpu", "cuda", or "auto") over pool (borrowed,
 * may be NULL; it runs the CPU backend's ops and every fallback). A name
 * not compiled in is GD_ERR_INVALID, one that cannot run here
 * GD_ERR_NOT_FOUND, each with the reason. */
gd_status gd_backend_open(gd_backend *out, const char *name, gd_pool *pool) GD_MUST_CHECK;
/* Releases what gd_backend_open took (nothing for the CPU backend). */
void gd_backend_close(gd_backend *be);

/* The backend a name stands for: "auto" is "cuda" where it is usable, else
 * "cpu"; any other name is itself. */
const char *gd_backend_resolve(const char *name);

/* What decides the bits of backend `name`'s results (kernels/cpu/identity.h
 * for the CPU), for the hardware class, without opening it. The errors of
 * gd_backend_open. */
gd_status gd_backend_identity(const char *name, char *out, size_t cap) GD_MUST_CHECK;

#endif
