/* The CPU ops in double precision: the path the finite-difference gradient
 * checks run on (tests only; the product library has none of them). Same
 * prototypes and conventions as kernels/cpu/ops.h, with double for float. */
#ifndef GD_KERNELS_CPU_OPS_F64_H
#define GD_KERNELS_CPU_OPS_F64_H

#include "kernels/cpu/ops.h"

#define GD_REAL double
#define GD_OP(name) name##_f64
#include "kernels/cpu/ops_api.h"
#undef GD_REAL
#undef GD_OP

#endif
