/* The CPU ops of a DiLoCo round: the pseudo-gradient a worker encodes and
 * the outer step every member applies. Their bits are part of the protocol
 * (docs/protocol.md, "Aggregation"): each statement is one rounded float
 * operation in a fixed order, with no contraction into fused multiply-adds,
 * so every backend must reproduce them exactly. Float only: nothing checks
 * them in double. */
#ifndef GD_KERNELS_CPU_ROUND_OPS_H
#define GD_KERNELS_CPU_ROUND_OPS_H

#include <stddef.h>

#include "common/pool.h"

/* delta[i] = start[i] - params[i]; then, if residual is not NULL and decay
 * is not 1, residual[i] = decay * residual[i]. */
void gd_cpu_pseudo_gradient_f32(gd_pool *pool, float *delta, const float *start,
                                const float *params, float *residual, size_t n, float decay);

/* The outer step is these two ops (trainer/diloco.c): acc starts at zero,
 * each contribution is added in the aggregate's order, then one Nesterov
 * step. Per element j:
 *   acc[j] = acc[j] + weight * delta[j]             (each contribution)
 *   buf = mu * momentum[j] + acc[j];  momentum[j] = buf
 *   params[j] = params[j] - lr * (acc[j] + mu * buf)
 * PyTorch's SGD with nesterov=True and dampening 0, stepping on the
 * weighted average of the contributions. Adding one contribution at a time
 * rounds exactly as one loop over all of them per element would (the same
 * start, the same order), and lets the aggregate hold one decoded
 * contribution at a time, not all of them. */
void gd_cpu_weighted_add_f32(gd_pool *pool, float *acc, const float *delta, float weight,
                             size_t n);
void gd_cpu_nesterov_step_f32(gd_pool *pool, float *params, float *momentum, const float *acc,
                              size_t n, float lr, float mu);

#endif
