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

/* Per element j, with acc summed over i in the given order:
 *   acc = sum_i weights[i] * deltas[i][j]
 *   buf = mu * momentum[j] + acc;  momentum[j] = buf
 *   params[j] = params[j] - lr * (acc + mu * buf)
 * PyTorch's SGD with nesterov=True and dampening 0, stepping on the
 * weighted average of the contributions. */
void gd_cpu_outer_step_f32(gd_pool *pool, float *params, float *momentum,
                           const float *const *deltas, const float *weights, size_t count,
                           size_t n, float lr, float mu);

#endif
