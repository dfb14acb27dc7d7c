/* CPU reference ops of the Llama-style decoder: forward and backward of
 * every layer, the loss and the optimizer update. They are the oracle every
 * other backend is checked against.
 *
 * Each op exists in two precisions from one source (kernels/cpu/ops_body.inc):
 * _f32, declared here, is what trains; _f64 (kernels/cpu/ops_f64.h, in the
 * test-only library gd_kernels_f64) is the double-precision path the
 * finite-difference gradient checks run on. kernels/cpu/ops_api.h holds the
 * documented prototypes once.
 *
 * Outside kernels/, code calls these only through a backend
 * (kernels/backend.h); the CPU backend is these ops.
 *
 * Conventions
 * - Row-major. n = B*T token rows; row i is position i % T of sequence i / T.
 * - Weights use the Hugging Face layout: a linear layer's weight is
 *   (out_features, in_features) and computes y = x W^T.
 * - Forward ops overwrite their outputs. Backward ops ADD into the
 *   gradients they produce (dinp += ..., dweight += ...), so gradients of
 *   shared inputs (residual stream, tied embeddings) and of accumulated
 *   micro-batches simply sum; callers zero gradients when a step starts.
 *   A NULL gradient pointer skips that gradient.
 * - Determinism: work is split into tasks of fixed size that depend only
 *   on the shapes, never on the pool's thread count, and every reduction
 *   runs in a fixed order; the bits of every output are the same for any
 *   number of threads. Matmuls call single-threaded CBLAS on fixed tiles.
 * - pool may be NULL (everything runs on the caller's thread).
 * - Sizes are trusted: callers (the model) validate shapes and token ids. */
#ifndef GD_KERNELS_CPU_OPS_H
#define GD_KERNELS_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"

/* Makes CBLAS single-threaded (the pool does the threading); call once
 * before the first op. Idempotent. */
void gd_cpu_ops_init(void);

/* The sum of squares' chunk: each chunk is summed in double, then the
 * partials in chunk order. */
#define GD_CPU_SUM_SQUARES_CHUNK ((size_t)1 << 16)

/* Flash attention's key block (its online softmax rescales once a block)
 * and the largest head it takes (its accumulators live on the stack). */
#define GD_CPU_FLASH_BLOCK ((size_t)64)
#define GD_CPU_FLASH_HEAD_MAX ((size_t)512)

#define GD_REAL float
#define GD_OP(name) name##_f32
#include "kernels/cpu/ops_api.h"
#undef GD_REAL
#undef GD_OP

#endif
