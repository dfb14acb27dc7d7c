/* The model passes in double precision, on the CPU ops in double: the
 * reference the finite-difference gradient checks run on (tests only; the
 * product library has none of it). Same prototypes as trainer/model.h with
 * double for float and a pool (may be NULL) for the backend. */
#ifndef GD_TRAINER_MODEL_F64_H
#define GD_TRAINER_MODEL_F64_H

#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "trainer/layout.h"
#include "trainer/settings.h"

#define GD_REAL double
#define GD_OP(name) name##_f64
#define GD_EXEC_ARG gd_pool *
#include "trainer/model_api.h"
#undef GD_REAL
#undef GD_OP
#undef GD_EXEC_ARG

#endif
