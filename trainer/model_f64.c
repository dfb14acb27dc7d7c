/* The model passes in double on the CPU ops in double: the reference the
 * gradient checks run on (see trainer/model_body.inc). The wrappers below
 * give the double ops the backend's argument lists, so the body is the
 * same text for both precisions. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/codec_ops.h"
#include "kernels/cpu/ops_f64.h"
#include "trainer/model_f64.h"

static double *gd_k64_alloc_real(gd_pool *pool, size_t count) {
    (void)pool;
    if (count > SIZE_MAX / sizeof(double))
        return NULL;
    return calloc(count ? count : 1, sizeof(double));
}

static int32_t *gd_k64_alloc_i32(gd_pool *pool, size_t count) {
    (void)pool;
    if (count > SIZE_MAX / sizeof(int32_t))
        return NULL;
    return calloc(count ? count : 1, sizeof(int32_t));
}

static void gd_k64_free(gd_pool *pool, void *buf) {
    (void)pool;
    free(buf);
}

static void gd_k64_zero(gd_pool *pool, void *dst, size_t bytes) {
    (void)pool;
    memset(dst, 0, bytes);
}

static void gd_k64_upload(gd_pool *pool, void *dst, const void *src, size_t bytes) {
    (void)pool;
    memcpy(dst, src, bytes);
}

static void gd_k64_download(gd_pool *pool, void *dst, const void *src, size_t bytes) {
    (void)pool;
    memcpy(dst, src, bytes);
}

static void gd_k64_rope_tables(gd_pool *pool, double *cos_table, double *sin_table,
                               size_t max_pos, size_t head_dim, double theta) {
    (void)pool;
    gd_cpu_rope_tables_f64(cos_table, sin_table, max_pos, head_dim, theta);
}

static void gd_k64_embedding_forward(gd_pool *pool, double *out, const int32_t *tokens,
                                     const double *table, size_t n, size_t dim, size_t vocab) {
    (void)vocab;
    gd_cpu_embedding_forward_f64(pool, out, tokens, table, n, dim);
}

static void gd_k64_embedding_backward(gd_pool *pool, double *dtable, const double *dout,
                                      const int32_t *tokens, size_t n, size_t dim,
                                      size_t vocab) {
    (void)vocab;
    gd_cpu_embedding_backward_f64(pool, dtable, dout, tokens, n, dim);
}

/* A bf16 model in double: each value through float and the CPU rounding
 * (the float model's rule; double is only the checks' reference). */
static void gd_k64_bf16_round(gd_pool *pool, double *out, const double *x, size_t n) {
    float f[256];
    for (size_t at = 0; at < n; at += 256) {
        size_t m = n - at < 256 ? n - at : 256;
        for (size_t i = 0; i < m; i++)
            f[i] = (float)x[at + i];
        gd_cpu_bf16_quantize_f32(pool, NULL, f, f, m);
        for (size_t i = 0; i < m; i++)
            out[at + i] = f[i];
    }
}

static uint16_t *gd_k64_alloc_u16(gd_pool *pool, size_t count) {
    (void)pool;
    if (count > SIZE_MAX / sizeof(uint16_t))
        return NULL;
    return calloc(count ? count : 1, sizeof(uint16_t));
}

/* A bf16 model's codes, from double through float. */
static void gd_k64_bf16_quantize(gd_pool *pool, uint16_t *h, double *decoded, const double *x,
                                 size_t n) {
    (void)pool;
    for (size_t i = 0; i < n; i++) {
        float f = (float)x[i];
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        h[i] = gd_bf16_code(u);
        if (decoded != NULL)
            decoded[i] = gd_bf16_value(h[i]);
    }
}

static void gd_k64_bf16_dequantize(gd_pool *pool, double *y, const uint16_t *h, size_t n) {
    (void)pool;
    for (size_t i = 0; i < n; i++)
        y[i] = gd_bf16_value(h[i]);
}

#define gd_k64_rmsnorm_forward gd_cpu_rmsnorm_forward_f64
#define gd_k64_rmsnorm_backward gd_cpu_rmsnorm_backward_f64
#define gd_k64_matmul_forward gd_cpu_matmul_forward_f64
#define gd_k64_matmul_backward gd_cpu_matmul_backward_f64
#define gd_k64_rope_forward gd_cpu_rope_forward_f64
#define gd_k64_rope_backward gd_cpu_rope_backward_f64
#define gd_k64_attention_forward gd_cpu_attention_forward_f64
#define gd_k64_attention_backward gd_cpu_attention_backward_f64
#define gd_k64_flash_attention_forward gd_cpu_flash_attention_forward_f64
#define gd_k64_flash_attention_backward gd_cpu_flash_attention_backward_f64
#define gd_k64_swiglu_forward gd_cpu_swiglu_forward_f64
#define gd_k64_swiglu_backward gd_cpu_swiglu_backward_f64
#define gd_k64_add gd_cpu_add_f64
#define gd_k64_cross_entropy_forward gd_cpu_cross_entropy_forward_f64
#define gd_k64_cross_entropy_backward gd_cpu_cross_entropy_backward_f64

#define GD_REAL double
#define GD_OP(name) name##_f64
#define GD_EXEC gd_pool *
#define GD_EXEC_ARG gd_pool *
#define GD_EXEC_SET(dst, arg) ((dst) = (arg), gd_cpu_ops_init())
#define GD_KCTX(m) ((m)->exec)
#define GD_K(name) gd_k64_##name
#include "trainer/model_body.inc"
