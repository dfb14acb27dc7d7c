/* The codecs' arithmetic on the CPU (see kernels/cpu/codec_ops.h).
 *
 * Speed: a worker codes its whole Δ every round and a reducer decodes every
 * worker's, so the block loops run over fixed-size local copies (constant
 * trip counts, nothing aliasing) which GCC vectorises even under -O2's
 * "very cheap" cost model. Every step is an exact IEEE or integer
 * operation, so vector and scalar code give the same bits. */
#include "kernels/cpu/codec_ops.h"

#include <stdbool.h>
#include <string.h>

#include "common/block_copy.h"

#define ABS_MASK 0x7fffffffu
#define EXP_MASK 0x7f800000u
/* Bits of 2^-64: below it L / m could overflow (codec_ops.h). */
#define TINY_KEY 0x1f800000u
#define B8 GD_QUANT_BLOCK_INT8
#define B4 GD_QUANT_BLOCK_INT4
/* Values per pool task: a multiple of both blocks, so tasks split no
 * block and never change a value's arithmetic, only who computes it. */
#define TASK_VALUES ((size_t)1 << 16)

_Static_assert(TASK_VALUES % B8 == 0 && TASK_VALUES % B4 == 0 && B8 % B4 == 0,
               "tasks hold whole blocks");

/* The block loops must be inlined where the block size is a constant, or
 * they lose their fixed trip counts (and most of their speed): GCC's
 * heuristics decline a body called four times. */
#define GD_BLOCK_INLINE static inline __attribute__((always_inline))

static inline float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline int32_t quantize_one(float v, float inv, int32_t lim) {
    float t = v * inv;
    int32_t r = (int32_t)t;
    float f = t - (float)r; /* exact: see codec_ops.h */
    r += (f >= 0.5f) - (f <= -0.5f);
    r = r < lim ? r : lim;
    r = r > -lim ? r : -lim;
    return r;
}

/* One block of m values (m <= len; len a constant at every call, so the
 * loops keep fixed trip counts). */
GD_BLOCK_INLINE void quantize_block(int8_t *q, float *scale, float *decoded, const float *x,
                                  size_t m, size_t len, float limf) {
    float xb[B8];
    int8_t qb[B8];
    gd_block_load(xb, x, len * sizeof(float), m * sizeof(float));
    int32_t ub[B8];
    memcpy(ub, xb, len * sizeof(float));
    /* Signed: keys are below 2^31, and SSE2 has a signed compare only. */
    int32_t mx = 0;
    for (size_t i = 0; i < len; i++) {
        int32_t k = ub[i] & (int32_t)ABS_MASK;
        mx = k > mx ? k : mx;
    }
    uint32_t mk = (uint32_t)mx;
    if (mk >= EXP_MASK || mk == 0) {
        /* NaN or infinity: a non-finite scale marks the block, and the
         * inputs stay as they were where decoded is x. All zero: scale 0. */
        *scale = mk == 0 ? 0.0f : u2f(mk) / limf;
        memset(q, 0, m);
        if (decoded != NULL && mk == 0)
            memset(decoded, 0, m * sizeof(float));
        else if (decoded != NULL && decoded != x)
            memcpy(decoded, x, m * sizeof(float));
        return;
    }
    float mf = u2f(mk), s = mf / limf;
    *scale = s;
    if (mk < TINY_KEY) {
        for (size_t i = 0; i < len; i++)
            xb[i] *= 0x1p64f;
        mf *= 0x1p64f;
    }
    float inv = limf / mf;
    int32_t lim = (int32_t)limf;
    for (size_t i = 0; i < len; i++)
        qb[i] = (int8_t)quantize_one(xb[i], inv, lim);
    gd_block_store(q, qb, len, m);
    if (decoded != NULL) {
        for (size_t i = 0; i < len; i++)
            xb[i] = (float)qb[i] * s;
        gd_block_store(decoded, xb, len * sizeof(float), m * sizeof(float));
    }
}

GD_BLOCK_INLINE void dequantize_block(float *y, const int8_t *q, float scale, size_t m,
                                    size_t len) {
    int8_t qb[B8];
    float yb[B8];
    gd_block_load(qb, q, len, m);
    for (size_t i = 0; i < len; i++)
        yb[i] = (float)qb[i] * scale;
    gd_block_store(y, yb, len * sizeof(float), m * sizeof(float));
}

static void task_range(size_t task, size_t n, size_t *lo, size_t *hi) {
    *lo = task * TASK_VALUES;
    *hi = n - *lo < TASK_VALUES ? n : *lo + TASK_VALUES;
}

static size_t task_count(size_t n) { return (n + TASK_VALUES - 1) / TASK_VALUES; }

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* --- block quantisation ------------------------------------------------------------ */

typedef struct quantize_job {
    int8_t *q;
    float *scales, *decoded;
    const float *x;
    size_t n, block;
    float limit;
} quantize_job;

/* The blocks of [lo, hi) (lo a multiple of len, len a constant at each
 * call): whole blocks, then a short last one. */
GD_BLOCK_INLINE void quantize_range(int8_t *restrict q, float *restrict scales,
                                  float *decoded, const float *x, size_t lo, size_t hi,
                                  size_t len, float limit) {
    size_t off = lo;
    for (; hi - off >= len; off += len)
        quantize_block(q + off, scales + off / len, decoded != NULL ? decoded + off : NULL,
                       x + off, len, len, limit);
    if (off < hi)
        quantize_block(q + off, scales + off / len, decoded != NULL ? decoded + off : NULL,
                       x + off, hi - off, len, limit);
}

static void quantize_task(void *arg, size_t task) {
    const quantize_job *j = arg;
    size_t lo, hi;
    task_range(task, j->n, &lo, &hi);
    if (j->block == B8)
        quantize_range(j->q, j->scales, j->decoded, j->x, lo, hi, B8, j->limit);
    else
        quantize_range(j->q, j->scales, j->decoded, j->x, lo, hi, B4, j->limit);
}

void gd_cpu_quantize_blocks_f32(gd_pool *pool, int8_t *q, float *scales, float *decoded,
                                const float *x, size_t n, size_t block, float limit) {
    quantize_job job = {q, scales, decoded, x, n, block, limit};
    gd_pool_run(pool, task_count(n), quantize_task, &job);
}

typedef struct dequantize_job {
    float *y;
    const int8_t *q;
    const float *scales;
    size_t n, block;
} dequantize_job;

GD_BLOCK_INLINE void dequantize_range(float *restrict y, const int8_t *restrict q,
                                    const float *restrict scales, size_t lo, size_t hi,
                                    size_t len) {
    size_t off = lo;
    for (; hi - off >= len; off += len)
        dequantize_block(y + off, q + off, scales[off / len], len, len);
    if (off < hi)
        dequantize_block(y + off, q + off, scales[off / len], hi - off, len);
}

static void dequantize_task(void *arg, size_t task) {
    const dequantize_job *j = arg;
    size_t lo, hi;
    task_range(task, j->n, &lo, &hi);
    if (j->block == B8)
        dequantize_range(j->y, j->q, j->scales, lo, hi, B8);
    else
        dequantize_range(j->y, j->q, j->scales, lo, hi, B4);
}

void gd_cpu_dequantize_blocks_f32(gd_pool *pool, float *y, const int8_t *q,
                                  const float *scales, size_t n, size_t block) {
    dequantize_job job = {y, q, scales, n, block};
    gd_pool_run(pool, task_count(n), dequantize_task, &job);
}

/* --- bfloat16 ---------------------------------------------------------------------- */

typedef struct bf16_job {
    uint16_t *h;
    float *decoded;
    const float *x;
    const uint16_t *hin;
    float *y;
    size_t n;
} bf16_job;

static void bf16_quantize_task(void *arg, size_t task) {
    const bf16_job *j = arg;
    size_t lo, hi;
    task_range(task, j->n, &lo, &hi);
    for (size_t off = lo; off < hi; off += B8) {
        size_t m = min_size(B8, hi - off);
        uint32_t xb[B8], ub[B8];
        uint16_t hb[B8];
        gd_block_load(xb, j->x + off, sizeof xb, m * sizeof(float));
        for (size_t i = 0; i < B8; i++)
            hb[i] = gd_bf16_code(xb[i]);
        if (j->h != NULL)
            gd_block_store(j->h + off, hb, sizeof hb, m * sizeof(uint16_t));
        if (j->decoded != NULL) {
            for (size_t i = 0; i < B8; i++)
                ub[i] = (xb[i] & EXP_MASK) == EXP_MASK ? xb[i] : (uint32_t)hb[i] << 16;
            gd_block_store(j->decoded + off, ub, sizeof ub, m * sizeof(float));
        }
    }
}

void gd_cpu_bf16_quantize_f32(gd_pool *pool, uint16_t *h, float *decoded, const float *x,
                              size_t n) {
    bf16_job job = {.h = h, .decoded = decoded, .x = x, .n = n};
    gd_pool_run(pool, task_count(n), bf16_quantize_task, &job);
}

static void bf16_dequantize_task(void *arg, size_t task) {
    const bf16_job *j = arg;
    size_t lo, hi;
    task_range(task, j->n, &lo, &hi);
    for (size_t off = lo; off < hi; off += B8) {
        size_t m = min_size(B8, hi - off);
        uint16_t hb[B8];
        uint32_t ub[B8];
        gd_block_load(hb, j->hin + off, sizeof hb, m * sizeof(uint16_t));
        for (size_t i = 0; i < B8; i++)
            ub[i] = (uint32_t)hb[i] << 16;
        gd_block_store(j->y + off, ub, sizeof ub, m * sizeof(float));
    }
}

void gd_cpu_bf16_dequantize_f32(gd_pool *pool, float *y, const uint16_t *h, size_t n) {
    bf16_job job = {.hin = h, .y = y, .n = n};
    gd_pool_run(pool, task_count(n), bf16_dequantize_task, &job);
}
