/* The CPU ops in double precision (the path the finite-difference gradient
 * checks run on): instantiates the template kernels/cpu/ops_body.inc with
 * double. */
#include "kernels/cpu/ops_f64.h"

#define GD_REAL double
#define GD_OP(name) name##_f64
#define GD_EXP(x) exp(x)
#define GD_SQRT(x) sqrt(x)
#define GD_GEMM cblas_dgemm
#include "kernels/cpu/ops_body.inc"
