/* Deterministic initial parameters: norm weights 1, every matrix drawn from
 * an approximately normal distribution with std initializer_range.
 *
 * Element i of tensor t is a pure function of (seed, t, i): one
 * Philox4x32-10 block keyed by (seed, t) at counter i gives four uniforms,
 * and z = (u0 + u1 + u2 + u3 - 2) * sqrt(3) (Irwin-Hall of order 4: mean 0,
 * variance 1, bounded by 3.46). Only exactly rounded operations are used,
 * so every host, thread count and (later) GPU derives bit-identical
 * initial weights: a run's G_0 is reproducible from its seed. */
#ifndef GD_TRAINER_INIT_H
#define GD_TRAINER_INIT_H

#include <stdint.h>

#include "common/pool.h"
#include "trainer/layout.h"

void gd_params_init(gd_pool *pool, float *params, const gd_param_layout *layout, uint64_t seed);
/* Values [lo, lo + count) of the same initialisation into out (count
 * values), equal to gd_params_init's: a model's weights made a window at a
 * time, never whole in memory. */
void gd_params_init_range(gd_pool *pool, float *out, const gd_param_layout *layout,
                          uint64_t seed, size_t lo, size_t count);

/* The value of element `index` of tensor `tensor` before scaling (the
 * standardised draw), for tests. */
double gd_params_init_draw(uint64_t seed, uint32_t tensor, uint64_t index);

#endif
