/* The CPU ops in single precision (the training path): instantiates the
 * template kernels/cpu/ops_body.inc with float. */
#include "kernels/cpu/ops.h"

#define GD_REAL float
#define GD_OP(name) name##_f32
#define GD_EXP(x) expf(x)
#define GD_SQRT(x) sqrtf(x)
#define GD_GEMM cblas_sgemm
#include "kernels/cpu/ops_body.inc"
