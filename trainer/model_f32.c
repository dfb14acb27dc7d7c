/* The model passes in float: what training runs (see trainer/model_impl.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ops.h"
#include "trainer/model.h"

#define GD_REAL float
#define GD_OP(name) name##_f32
#include "trainer/model_impl.h"
