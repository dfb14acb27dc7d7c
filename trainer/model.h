/* The Llama-style decoder's forward and backward passes over a flat
 * parameter buffer (trainer/layout.h), built on the CPU ops.
 *
 * Like the kernels, one source serves two precisions: gd_model_f32 trains,
 * gd_model_f64 is the double-precision path of the whole-model
 * finite-difference gradient check. trainer/model_api.h holds the
 * documented prototypes; this header instantiates them. */
#ifndef GD_TRAINER_MODEL_H
#define GD_TRAINER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "trainer/layout.h"

#define GD_REAL float
#define GD_OP(name) name##_f32
#include "trainer/model_api.h"
#undef GD_REAL
#undef GD_OP

#define GD_REAL double
#define GD_OP(name) name##_f64
#include "trainer/model_api.h"
#undef GD_REAL
#undef GD_OP

#endif
