/* The model passes in double: the reference the gradient checks run on
 * (see trainer/model_impl.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ops.h"
#include "trainer/model.h"

#define GD_REAL double
#define GD_OP(name) name##_f64
#include "trainer/model_impl.h"
