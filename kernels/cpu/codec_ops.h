/* The arithmetic of the pseudo-gradient codecs: block quantisation (int8,
 * int4 and topk's kept values) and bfloat16 rounding, with their inverses.
 * trainer/codec.h holds the formats built from these values (byte layout,
 * validation, top-k selection); this file holds the one rule for the
 * numbers, which every backend reproduces bit for bit: a value's code is
 * part of a payload's canonical bytes and its decoded value feeds the
 * error-feedback residual, both hashed.
 *
 * Quantisation of a block of values x with largest magnitude m, for a
 * limit L (127 for int8, 7 for int4):
 *
 *     scale = m / L                       (binary32 division)
 *     q     = rha(x * (L / m))            (binary32 division, then multiply)
 *     rha(t) = trunc(t) + (f >= 0.5) - (f <= -0.5),  f = t - trunc(t)
 *
 * then q is clamped to [-L, L] (a no-op in practice: |x| <= m keeps |t|
 * within an ulp or two of L). f is exact (t and trunc(t) have the same sign
 * and are within a factor of two once |t| >= 1), so rha rounds to nearest
 * with ties away from zero without the classic t + 0.5 double-rounding
 * trap. q's two binary32 operations are evaluated as if the exponent range
 * were unbounded: when m < 2^-64, L / m could overflow, so the block is
 * first multiplied by 2^64 (exact) and L / (m * 2^64) used instead, which
 * gives the same bits. (scale itself is a plain binary32 division,
 * subnormal if m is tiny.) A block with m = 0 has scale 0 and every q = 0.
 * Decoded values are (float)q * scale.
 *
 * bfloat16: each value's upper 16 bits after rounding to nearest, ties to
 * even, on the 16 bits dropped; a finite value that would round to
 * infinity saturates to the largest finite bfloat16 of its sign. Decoded
 * values are the 16 bits shifted back up.
 *
 * Every step is an exact IEEE or integer operation in a fixed order, with
 * no fused multiply-add and no libm, so vector, scalar and device code give
 * the same bits. Non-finite input is the caller's to refuse; these ops mark
 * it without failing (see each op) so that the caller can name the value. */
#ifndef GD_KERNELS_CPU_CODEC_OPS_H
#define GD_KERNELS_CPU_CODEC_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/pool.h"

/* Host code, and device code where nvcc compiles this header. */
#ifdef __CUDACC__
#define GD_CODEC_FN static inline __host__ __device__
#else
#define GD_CODEC_FN static inline
#endif

/* bfloat16's rule for one value's bits u (a float's): its code. A NaN or
 * an infinity keeps its upper 16 bits. The one home of the rule: the
 * codec's loops, AdamW's bf16 moments (kernels/cpu/ops_body.inc) and the
 * CUDA kernels use it. */
GD_CODEC_FN uint16_t gd_bf16_code(uint32_t u) {
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    r = (r & 0x7f80u) == 0x7f80u ? (r & 0x8000u) | 0x7f7fu : r; /* saturate */
    return (uint16_t)((u & 0x7f800000u) == 0x7f800000u ? u >> 16 : r);
}

/* A code's value: its 16 bits shifted up. */
GD_CODEC_FN float gd_bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The block sizes the quantiser takes: the codecs' int8 and int4 blocks. */
#define GD_QUANT_BLOCK_INT8 64
#define GD_QUANT_BLOCK_INT4 32

/* x's n values in blocks of `block` values (GD_QUANT_BLOCK_INT8 or _INT4;
 * the last block may be shorter), block b against its own largest
 * magnitude: scales[b] = m / limit, q[i] its code, and, if decoded is not
 * NULL, decoded[i] = (float)q[i] * scales[b]. decoded may be x itself. A
 * block holding a NaN or an infinity gets a non-finite scale (m / limit
 * with m that NaN or infinity), zero codes, and decoded values equal to
 * its inputs. limit is 127 or 7 (any integer in 1..127 works). */
void gd_cpu_quantize_blocks_f32(gd_pool *pool, int8_t *q, float *scales, float *decoded,
                                const float *x, size_t n, size_t block, float limit);

/* y[i] = (float)q[i] * scales[i / block]. */
void gd_cpu_dequantize_blocks_f32(gd_pool *pool, float *y, const int8_t *q,
                                  const float *scales, size_t n, size_t block);

/* h[i] = x[i] rounded to bfloat16 (the rule above); if decoded is not NULL,
 * decoded[i] is h[i]'s value (decoded may be x itself). h may be NULL when
 * decoded is not: the rounding alone (a bf16 run's activations). A NaN or an
 * infinity keeps its upper 16 bits in h (an all-ones exponent, so a caller
 * finds it there) and its own value in decoded. */
void gd_cpu_bf16_quantize_f32(gd_pool *pool, uint16_t *h, float *decoded, const float *x,
                              size_t n);

/* y[i] = h[i]'s value: the 16 bits shifted up. */
void gd_cpu_bf16_dequantize_f32(gd_pool *pool, float *y, const uint16_t *h, size_t n);

#endif
