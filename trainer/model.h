/* The Llama-style decoder's forward and backward passes over a flat
 * parameter buffer (trainer/layout.h), run on a backend (kernels/backend.h).
 *
 * One source (trainer/model_body.inc) serves two precisions: gd_model_f32,
 * declared here, trains on any backend; gd_model_f64 (trainer/model_f64.h,
 * in the test-only library gd_trainer_f64) is the double-precision path of
 * the whole-model finite-difference gradient check, on the CPU ops.
 * trainer/model_api.h holds the documented prototypes. */
#ifndef GD_TRAINER_MODEL_H
#define GD_TRAINER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "kernels/backend.h"
#include "trainer/layout.h"
#include "trainer/settings.h"

/* The float model runs on a backend; NULL is the CPU backend on the
 * caller's thread. The model keeps its own copy of the backend's handle. */
#define GD_REAL float
#define GD_OP(name) name##_f32
#define GD_EXEC_ARG const gd_backend *
#include "trainer/model_api.h"
#undef GD_REAL
#undef GD_OP
#undef GD_EXEC_ARG

#endif
