/* The CUDA kernels' launchers, callable from C: each enqueues its kernel on
 * stream and checks the launch (kernels/cuda/cuda_check.h). Arguments are
 * device pointers with the shapes and semantics of the CPU ops of the same
 * name (kernels/cpu/ops.h, kernels/cpu/round_ops.h,
 * kernels/cpu/codec_ops.h). One .cu file per op family. */
#ifndef GD_KERNELS_CUDA_LAUNCH_H
#define GD_KERNELS_CUDA_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* embedding.cu */
void gd_cuda_embedding_forward(float *out, cudaStream_t stream, const int32_t *tokens,
                               const float *table, size_t n, size_t dim);
void gd_cuda_embedding_backward(cudaStream_t stream, float *dtable, const float *dout,
                                const int32_t *tokens, size_t n, size_t dim, size_t vocab);

/* rmsnorm.cu */
void gd_cuda_rmsnorm_forward(float *out, cudaStream_t stream, float *rstd, const float *inp,
                             const float *weight, size_t n, size_t dim, double eps);
/* dweight's sum over the n rows runs in two fixed stages: chunks of rows
 * into partials (gd_cuda_rmsnorm_partials(n, dim) doubles of device
 * scratch; NULL when dweight is), then the chunks in order. */
size_t gd_cuda_rmsnorm_partials(size_t n, size_t dim);
void gd_cuda_rmsnorm_backward(cudaStream_t stream, float *dinp, float *dweight,
                              const float *dout, const float *inp, const float *weight,
                              const float *rstd, size_t n, size_t dim, double *partials);

/* rope.cu */
void gd_cuda_rope_forward(float *out, cudaStream_t stream, const float *inp,
                          const float *cos_table, const float *sin_table, size_t batch,
                          size_t seq_len, size_t heads, size_t head_dim);
void gd_cuda_rope_backward(cudaStream_t stream, float *dinp, const float *dout,
                           const float *cos_table, const float *sin_table, size_t batch,
                           size_t seq_len, size_t heads, size_t head_dim);

/* attention.cu: over rows of (rows, seq_len) scores, row r at query
 * position r % seq_len. The softmax turns scaled scores into the causal
 * probabilities (zeros above the diagonal); the backward turns dP = dO V^T
 * into dS = P * (dP - rowsum(P * dP)). The products around them are cuBLAS
 * GEMMs (backend_cuda.c). */
void gd_cuda_attention_softmax(cudaStream_t stream, float *att, size_t rows, size_t seq_len);
void gd_cuda_attention_softmax_backward(cudaStream_t stream, float *ds, const float *att,
                                        size_t rows, size_t seq_len);

/* flash_attention.cu: ops_api.h's flash attention (head_dim at most
 * GD_CPU_FLASH_HEAD_MAX); scratch (B, heads, T) receives each row's
 * dout . out. Shapes gd_cuda_flash_mma_fits takes run on tensor cores
 * (flash_attention_mma.cu), the others a thread per output row, every sum
 * in a fixed order in double. */
void gd_cuda_flash_attention_forward(cudaStream_t stream, float *out, float *lse, const float *q,
                                     const float *k, const float *v, size_t batch,
                                     size_t seq_len, size_t heads, size_t kv_heads,
                                     size_t head_dim);
void gd_cuda_flash_attention_backward(cudaStream_t stream, float *dq, float *dk, float *dv,
                                      float *scratch, const float *dout, const float *attn_out,
                                      const float *lse, const float *q, const float *k,
                                      const float *v, size_t batch, size_t seq_len, size_t heads,
                                      size_t kv_heads, size_t head_dim);

/* flash_attention_mma.cu: the tensor-core kernels, for head dims that are a
 * multiple of 16 up to 128; D holds each row's dout . out. */
bool gd_cuda_flash_mma_fits(size_t batch, size_t seq_len, size_t heads, size_t head_dim);
void gd_cuda_flash_mma_forward(cudaStream_t stream, float *out, float *lse, const float *q,
                               const float *k, const float *v, size_t batch, size_t seq_len,
                               size_t heads, size_t kv_heads, size_t head_dim);
void gd_cuda_flash_mma_backward(cudaStream_t stream, float *dq, float *dk, float *dv,
                                const float *D, const float *dout, const float *lse,
                                const float *q, const float *k, const float *v, size_t batch,
                                size_t seq_len, size_t heads, size_t kv_heads,
                                size_t head_dim);

/* cross_entropy.cu */
void gd_cuda_cross_entropy_forward(cudaStream_t stream, float *losses, const float *logits,
                                   const int32_t *targets, size_t n, size_t vocab);
void gd_cuda_cross_entropy_backward(cudaStream_t stream, float *dlogits, const float *logits,
                                    const int32_t *targets, double dloss, size_t n,
                                    size_t vocab);

/* elementwise.cu */
void gd_cuda_add(float *out, cudaStream_t stream, const float *a, const float *b, size_t n);
void gd_cuda_swiglu_forward(float *out, cudaStream_t stream, const float *gate, const float *up,
                            size_t n);
void gd_cuda_swiglu_backward(cudaStream_t stream, float *dgate, float *dup, const float *dout,
                             const float *gate, const float *up, size_t n);

/* adamw.cu: the scalars are the CPU op's, each derived in double on the
 * host and rounded to float once (gd_cuda_adamw_scalars). */
typedef struct gd_cuda_adamw_scalars {
    float grad_scale, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size,
        bc2_sqrt, eps;
} gd_cuda_adamw_scalars;
void gd_cuda_adamw(cudaStream_t stream, float *param, const float *grad, float *m, float *v,
                   size_t n, const gd_cuda_adamw_scalars *s);
/* The same with the moments as bf16 codes, read decoded, stored rounded. */
void gd_cuda_adamw_bf16(cudaStream_t stream, float *param, const float *grad, uint16_t *m,
                        uint16_t *v, size_t n, const gd_cuda_adamw_scalars *s);

/* round.cu (built with --fmad=false: the CPU's bits) */
void gd_cuda_pseudo_gradient(cudaStream_t stream, float *delta, const float *start,
                             const float *params, float *residual, size_t n, float decay);
void gd_cuda_weighted_add(cudaStream_t stream, float *acc, const float *delta, float weight,
                          size_t n);
void gd_cuda_nesterov_step(cudaStream_t stream, float *params, float *momentum,
                           const float *acc, size_t n, float lr, float mu);

/* codec.cu: the codec ops of kernels/cpu/codec_ops.h, bit for bit. */
void gd_cuda_quantize_blocks(cudaStream_t stream, int8_t *q, float *scales, float *decoded,
                             const float *x, size_t n, size_t block, float limit);
void gd_cuda_dequantize_blocks(cudaStream_t stream, float *y, const int8_t *q,
                               const float *scales, size_t n, size_t block);
void gd_cuda_bf16_quantize(cudaStream_t stream, uint16_t *h, float *decoded, const float *x,
                           size_t n);
void gd_cuda_bf16_dequantize(cudaStream_t stream, float *y, const uint16_t *h, size_t n);

/* reduce.cu: partials[c] = the sum of x[i]^2 in double over chunk c of
 * chunk values, each chunk summed in index order (the CPU's order, so the
 * same bits); the caller adds the partials in chunk order. */
void gd_cuda_sum_squares_chunks(cudaStream_t stream, double *partials, const float *x,
                                size_t n, size_t chunk);

#ifdef __cplusplus
}
#endif

#endif
