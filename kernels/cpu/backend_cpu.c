/* The CPU backend: host memory, and every slot one of the kernels/cpu ops
 * run on the backend's pool (its context). */
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "kernels/backend.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/codec_ops.h"
#include "kernels/cpu/round_ops.h"

static void *cpu_buffer_alloc(const gd_backend *be, size_t bytes) {
    (void)be;
    return gd_calloc_large(1, bytes);
}

static void cpu_buffer_free(const gd_backend *be, void *buf) {
    (void)be;
    free(buf);
}

static void cpu_copy(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    (void)be;
    memmove(dst, src, bytes);
}

static void cpu_zero(const gd_backend *be, void *dst, size_t bytes) {
    (void)be;
    memset(dst, 0, bytes);
}

static void cpu_embedding_forward(const gd_backend *be, float *out, const int32_t *tokens,
                                  const float *table, size_t n, size_t dim) {
    gd_cpu_embedding_forward_f32(be->pool, out, tokens, table, n, dim);
}

static void cpu_embedding_backward(const gd_backend *be, float *dtable, const float *dout,
                                   const int32_t *tokens, size_t n, size_t dim, size_t vocab) {
    gd_cpu_embedding_backward_f32(be->pool, dtable, dout, tokens, n, dim);
}

static void cpu_rmsnorm_forward(const gd_backend *be, float *out, float *rstd, const float *inp,
                                const float *weight, size_t n, size_t dim, double eps) {
    gd_cpu_rmsnorm_forward_f32(be->pool, out, rstd, inp, weight, n, dim, eps);
}

static void cpu_rmsnorm_backward(const gd_backend *be, float *dinp, float *dweight, const float *dout,
                                 const float *inp, const float *weight, const float *rstd,
                                 size_t n, size_t dim) {
    gd_cpu_rmsnorm_backward_f32(be->pool, dinp, dweight, dout, inp, weight, rstd, n, dim);
}

static void cpu_matmul_forward(const gd_backend *be, float *out, const float *inp, const float *weight,
                               size_t n, size_t in_dim, size_t out_dim) {
    gd_cpu_matmul_forward_f32(be->pool, out, inp, weight, n, in_dim, out_dim);
}

static void cpu_matmul_backward(const gd_backend *be, float *dinp, float *dweight, const float *dout,
                                const float *inp, const float *weight, size_t n, size_t in_dim,
                                size_t out_dim) {
    gd_cpu_matmul_backward_f32(be->pool, dinp, dweight, dout, inp, weight, n, in_dim, out_dim);
}

static void cpu_rope_forward(const gd_backend *be, float *out, const float *inp, const float *cos_table,
                             const float *sin_table, size_t batch, size_t seq_len, size_t heads,
                             size_t head_dim) {
    gd_cpu_rope_forward_f32(be->pool, out, inp, cos_table, sin_table, batch, seq_len, heads,
                            head_dim);
}

static void cpu_rope_backward(const gd_backend *be, float *dinp, const float *dout, const float *cos_table,
                              const float *sin_table, size_t batch, size_t seq_len,
                              size_t heads, size_t head_dim) {
    gd_cpu_rope_backward_f32(be->pool, dinp, dout, cos_table, sin_table, batch, seq_len, heads,
                             head_dim);
}

static void cpu_attention_forward(const gd_backend *be, float *out, float *att, const float *q,
                                  const float *k, const float *v, size_t batch, size_t seq_len,
                                  size_t heads, size_t kv_heads, size_t head_dim) {
    gd_cpu_attention_forward_f32(be->pool, out, att, q, k, v, batch, seq_len, heads, kv_heads,
                                 head_dim);
}

static void cpu_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv, float *scratch,
                                   const float *dout, const float *att, const float *q,
                                   const float *k, const float *v, size_t batch,
                                   size_t seq_len, size_t heads, size_t kv_heads,
                                   size_t head_dim) {
    gd_cpu_attention_backward_f32(be->pool, dq, dk, dv, scratch, dout, att, q, k, v, batch, seq_len,
                                  heads, kv_heads, head_dim);
}

static void cpu_flash_attention_forward(const gd_backend *be, float *out, float *lse,
                                        const float *q, const float *k, const float *v,
                                        size_t batch, size_t seq_len, size_t heads,
                                        size_t kv_heads, size_t head_dim) {
    gd_cpu_flash_attention_forward_f32(be->pool, out, lse, q, k, v, batch, seq_len, heads,
                                       kv_heads, head_dim);
}

static void cpu_flash_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                         float *scratch, const float *dout, const float *attn_out,
                                         const float *lse, const float *q, const float *k,
                                         const float *v, size_t batch, size_t seq_len,
                                         size_t heads, size_t kv_heads, size_t head_dim) {
    gd_cpu_flash_attention_backward_f32(be->pool, dq, dk, dv, scratch, dout, attn_out, lse, q, k, v,
                                        batch, seq_len, heads, kv_heads, head_dim);
}

static void cpu_swiglu_forward(const gd_backend *be, float *out, const float *gate, const float *up,
                               size_t n) {
    gd_cpu_swiglu_forward_f32(be->pool, out, gate, up, n);
}

static void cpu_swiglu_backward(const gd_backend *be, float *dgate, float *dup, const float *dout,
                                const float *gate, const float *up, size_t n) {
    gd_cpu_swiglu_backward_f32(be->pool, dgate, dup, dout, gate, up, n);
}

static void cpu_add(const gd_backend *be, float *out, const float *a, const float *b, size_t n) {
    gd_cpu_add_f32(be->pool, out, a, b, n);
}

static void cpu_cross_entropy_forward(const gd_backend *be, float *losses, const float *logits,
                                      const int32_t *targets, size_t n, size_t vocab) {
    gd_cpu_cross_entropy_forward_f32(be->pool, losses, logits, targets, n, vocab);
}

static void cpu_cross_entropy_backward(const gd_backend *be, float *dlogits, const float *logits,
                                       const int32_t *targets, double dloss, size_t n,
                                       size_t vocab) {
    gd_cpu_cross_entropy_backward_f32(be->pool, dlogits, logits, targets, dloss, n, vocab);
}

static double cpu_sum_squares(const gd_backend *be, const float *x, size_t n, double start) {
    return gd_cpu_sum_squares_from_f32(be->pool, x, n, start);
}

static void cpu_adamw_bf16(const gd_backend *be, float *param, const float *grad, uint16_t *m,
                           uint16_t *v, size_t n, double lr, double beta1, double beta2,
                           double eps, double weight_decay, double bc1, double bc2,
                           double grad_scale) {
    gd_cpu_adamw_bf16_f32(be->pool, param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay,
                          bc1, bc2, grad_scale);
}

static void cpu_adamw(const gd_backend *be, float *param, const float *grad, float *m, float *v, size_t n,
                      double lr, double beta1, double beta2, double eps, double weight_decay,
                      double bc1, double bc2, double grad_scale) {
    gd_cpu_adamw_f32(be->pool, param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay, bc1, bc2,
                     grad_scale);
}

static void cpu_pseudo_gradient(const gd_backend *be, float *delta, const float *start,
                                const float *params, float *residual, size_t n, float decay) {
    gd_cpu_pseudo_gradient_f32(be->pool, delta, start, params, residual, n, decay);
}

static void cpu_weighted_add(const gd_backend *be, float *acc, const float *delta, float weight,
                             size_t n) {
    gd_cpu_weighted_add_f32(be->pool, acc, delta, weight, n);
}

static void cpu_nesterov_step(const gd_backend *be, float *params, float *momentum,
                              const float *acc, size_t n, float lr, float mu) {
    gd_cpu_nesterov_step_f32(be->pool, params, momentum, acc, n, lr, mu);
}

static void cpu_quantize_blocks(const gd_backend *be, int8_t *q, float *scales, float *decoded,
                                const float *x, size_t n, size_t block, float limit) {
    gd_cpu_quantize_blocks_f32(be->pool, q, scales, decoded, x, n, block, limit);
}

static void cpu_dequantize_blocks(const gd_backend *be, float *y, const int8_t *q,
                                  const float *scales, size_t n, size_t block) {
    gd_cpu_dequantize_blocks_f32(be->pool, y, q, scales, n, block);
}

static void cpu_bf16_quantize(const gd_backend *be, uint16_t *h, float *decoded, const float *x,
                              size_t n) {
    gd_cpu_bf16_quantize_f32(be->pool, h, decoded, x, n);
}

static void cpu_bf16_dequantize(const gd_backend *be, float *y, const uint16_t *h, size_t n) {
    gd_cpu_bf16_dequantize_f32(be->pool, y, h, n);
}

static const gd_backend_iface gd_cpu_iface = {
    .name = "cpu",
    .host_memory = true,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .upload = cpu_copy,
    .download = cpu_copy,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .synchronize = NULL,
    .embedding_forward = cpu_embedding_forward,
    .embedding_backward = cpu_embedding_backward,
    .rmsnorm_forward = cpu_rmsnorm_forward,
    .rmsnorm_backward = cpu_rmsnorm_backward,
    .matmul_forward = cpu_matmul_forward,
    .matmul_backward = cpu_matmul_backward,
    .rope_forward = cpu_rope_forward,
    .rope_backward = cpu_rope_backward,
    .attention_forward = cpu_attention_forward,
    .attention_backward = cpu_attention_backward,
    .flash_attention_forward = cpu_flash_attention_forward,
    .flash_attention_backward = cpu_flash_attention_backward,
    .swiglu_forward = cpu_swiglu_forward,
    .swiglu_backward = cpu_swiglu_backward,
    .add = cpu_add,
    .cross_entropy_forward = cpu_cross_entropy_forward,
    .cross_entropy_backward = cpu_cross_entropy_backward,
    .sum_squares = cpu_sum_squares,
    .adamw = cpu_adamw,
    .adamw_bf16 = cpu_adamw_bf16,
    .pseudo_gradient = cpu_pseudo_gradient,
    .weighted_add = cpu_weighted_add,
    .nesterov_step = cpu_nesterov_step,
    .quantize_blocks = cpu_quantize_blocks,
    .dequantize_blocks = cpu_dequantize_blocks,
    .bf16_quantize = cpu_bf16_quantize,
    .bf16_dequantize = cpu_bf16_dequantize,
};

void gd_backend_cpu_init(gd_backend *out, gd_pool *pool) {
    gd_cpu_ops_init();
    *out = (gd_backend){.iface = &gd_cpu_iface, .ctx = NULL, .pool = pool};
}
