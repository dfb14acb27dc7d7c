/* The model passes in float on a backend: what training runs (see
 * trainer/model_body.inc). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/cpu/ops.h" /* flash attention's head limit */
#include "trainer/model.h"

/* The model holds a copy of the backend handle: NULL asks for the CPU
 * backend on the caller's thread. */
static void gd_model_exec_set(gd_backend *dst, const gd_backend *be) {
    if (be != NULL)
        *dst = *be;
    else
        gd_backend_cpu_init(dst, NULL);
}

#define GD_REAL float
#define GD_OP(name) name##_f32
#define GD_EXEC gd_backend
#define GD_EXEC_ARG const gd_backend *
#define GD_EXEC_SET(dst, arg) gd_model_exec_set(&(dst), (arg))
#define GD_KCTX(m) (&(m)->exec)
#define GD_K(name) gd_backend_##name
#define gd_backend_alloc_real gd_backend_alloc_f32
#include "trainer/model_body.inc"
