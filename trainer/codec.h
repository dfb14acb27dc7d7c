/* Pseudo-gradient codecs: how a worker's Δ (a float vector) becomes the
 * bytes it sends, one chunk at a time.
 *
 *   none      the float32 values, little-endian
 *   bf16      each value rounded to bfloat16 (round to nearest, ties to even)
 *   int8      blocks of 64 values: a float32 scale absmax/127, then one
 *             signed byte per value, q = round(x / scale) in [-127, 127]
 *   int4      blocks of 32 values: a float32 scale absmax/7, then two
 *             values per byte (low nibble first), q in [-7, 7]
 *   topk:F    the ceil(F * n) largest-magnitude values of the chunk (ties
 *             broken by lower index), as a count, the kept values in index
 *             order as an int4 chunk of k values (blocks of 32 kept values,
 *             each with its own scale), and their indices: delta-coded as
 *             unsigned LEB128 varints (first index, then gaps minus 1), or,
 *             when strictly shorter, a bitmap of ceil(n / 8) bytes (bit i,
 *             LSB first, set for a kept index), flagged by the count's top
 *             bit; every other value decodes to 0
 *
 * Every codec is deterministic: the same input bits give the same output
 * bits on every machine (only exactly rounded IEEE operations, integer
 * work, and a fixed order; no libm, no fused multiply-add). Each chunk is
 * self-contained: decoding needs only its bytes, the codec and the chunk's
 * value count. Decoding validates everything (lengths, counts, indices
 * strictly increasing and in range, finite scales) and never reads past
 * the input.
 *
 * Error bounds (per value x, decoded y), which the tests check:
 *   none: y == x;  bf16: |y - x| <= max(2^-8 |x|, 2^-134) (the second term
 *         for subnormals, where bf16 has fewer bits); finite values beyond
 *         bf16's range saturate to its largest finite value;
 *   int8: |y - x| <= scale / 2 (+ rounding), scale = blockmax / 127;
 *   int4: |y - x| <= scale / 2 (+ rounding), scale = blockmax / 7;
 *   topk: kept values as int4 does (the block's max over 32 consecutive
 *         kept values); dropped values are at most the smallest kept
 *         magnitude.
 * (int8 refuses +-FLT_MAX, whose 127 * (FLT_MAX / 127) would decode
 * to infinity: GD_ERR_INVALID. trainer/codec.c documents the exact
 * quantisation expression.)
 * Error feedback (trainer/diloco.c) carries each round's coding error into
 * the next round's Δ, so the error does not accumulate. */
#ifndef GD_TRAINER_CODEC_H
#define GD_TRAINER_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

typedef enum gd_codec_kind {
    GD_CODEC_NONE = 0,
    GD_CODEC_BF16 = 1,
    GD_CODEC_INT8 = 2,
    GD_CODEC_INT4 = 3,
    GD_CODEC_TOPK = 4,
} gd_codec_kind;

#define GD_CODEC_INT8_BLOCK 64
#define GD_CODEC_INT4_BLOCK 32
#define GD_CODEC_PPM 1000000u

typedef struct gd_codec {
    gd_codec_kind kind;
    uint32_t topk_ppm; /* topk: kept fraction in parts per million, 1..1000000 */
} gd_codec;

/* "none", "bf16", "int8", "int4", "topk:FRACTION" (0 < FRACTION <= 1, e.g.
 * topk:0.01); GD_ERR_INVALID with the accepted forms otherwise. */
gd_status gd_codec_parse(gd_codec *out, const char *spec) GD_MUST_CHECK;
/* The spec text back ("topk:0.01"). */
void gd_codec_format(const gd_codec *codec, char *out, size_t cap);

/* Upper bound of a chunk's encoded size for n values. */
size_t gd_codec_chunk_bound(const gd_codec *codec, size_t n);

/* Encodes n values (n >= 1, at most 2^28) into out (cap >=
 * gd_codec_chunk_bound). If decoded is not NULL it receives exactly what
 * gd_codec_decode_chunk will return for these bytes (the error-feedback
 * residual is x - decoded); it may be x itself. Non-finite inputs are
 * GD_ERR_INVALID. */
gd_status gd_codec_encode_chunk(const gd_codec *codec, uint8_t *out, size_t cap, const float *x,
                                size_t n, size_t *written, float *decoded) GD_MUST_CHECK;

/* Decodes a chunk of n values; GD_ERR_PARSE for anything malformed (topk:
 * also a count other than the codec's ceil(F * n)). On failure x holds
 * unspecified values. */
gd_status gd_codec_decode_chunk(const gd_codec *codec, const uint8_t *in, size_t len, float *x,
                                size_t n) GD_MUST_CHECK;

#endif
