/* A compute backend: an interface table plus a context (ggml's
 * {iface, ctx}), so the model, the trainer and the round engine run the same
 * code on the CPU or on a device.
 *
 * Memory. A backend's buffers are opaque addresses in its own memory
 * (float * or int32_t * for arithmetic on offsets, never dereferenced
 * outside the backend). Only upload, download and copy move bytes between
 * host and backend. A backend whose buffers are host memory says so
 * (host_memory), and then host arrays may be handed to its ops directly:
 * that is how the CPU backend avoids copies.
 *
 * Ops. The slots mirror the CPU reference ops (kernels/cpu/ops.h: shapes,
 * conventions, what overwrites and what adds) without the pool argument.
 * Every op slot may be NULL: the dispatcher (gd_backend_* below) then
 * downloads the op's inputs, runs the CPU op on the host pool and uploads
 * the outputs. A new backend starts from buffers only and is correct at
 * once; it fills slots one by one, each checked by the cross-backend test
 * (tests/unit/test_backend_ops.c) against the CPU reference.
 *
 * Errors. Allocation failure is reported (NULL), because a caller can
 * choose a smaller batch. A failed transfer or launch is a local failure of
 * the machine, not a result: the backend prints what failed and aborts the
 * process, so no corrupt tensor ever reaches a transcript or the chain.
 *
 * Determinism. A backend promises the determinism contract of ops.h for
 * its own hardware class: the same inputs give the same bits, whatever its
 * parallelism. Ops whose results must be bit-identical to the CPU
 * reference on every class (pseudo_gradient, weighted_add, nesterov_step,
 * and the codec ops, whose codes are a payload's bytes) say so.
 *
 * Hashing. A state chunk is read for hashing with gd_backend_download of
 * its range (an offset into the buffer): the hashes are the host's, over
 * canonical bytes, so no backend hashes. */
#ifndef GD_KERNELS_BACKEND_H
#define GD_KERNELS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "kernels/cpu/codec_ops.h" /* the quantiser's block sizes */

struct gd_backend;

/* Every slot gets the backend it was called on: its context (be->ctx) and
 * the host threads (be->pool). */
typedef struct gd_backend_iface {
    const char *name; /* "cpu", "cuda", ... */
    bool host_memory; /* buffers are host memory: host arrays are valid arguments */

    /* --- buffers (required) --- */
    /* bytes of zeroed memory, or NULL when there is not enough. */
    void *(*buffer_alloc)(const struct gd_backend *be, size_t bytes);
    void (*buffer_free)(const struct gd_backend *be, void *buf); /* NULL is a no-op */
    void (*upload)(const struct gd_backend *be, void *dst, const void *host_src, size_t bytes);
    void (*download)(const struct gd_backend *be, void *host_dst, const void *src, size_t bytes);
    void (*copy)(const struct gd_backend *be, void *dst, const void *src, size_t bytes);
    void (*zero)(const struct gd_backend *be, void *dst, size_t bytes);
    /* Waits until every op issued so far is done (NULL: ops are synchronous). */
    void (*synchronize)(const struct gd_backend *be);
    /* Host memory the backend moves bytes to and from fastest (a GPU's
     * page-locked memory, which its copy engines reach without a staging
     * copy), or NULL when there is not enough; NULL slots: malloc and free. */
    void *(*host_alloc)(const struct gd_backend *be, size_t bytes);
    void (*host_free)(const struct gd_backend *be, void *buf); /* NULL is a no-op */
    /* A second queue, for the copies between ranks a collective makes in a
     * transfer group (kernels/collective.h), so that they overlap the ops.
     * transfers_after_ops: transfers issued from now on wait for every op
     * issued so far; ops_after_transfers: ops issued from now on wait for
     * every transfer issued so far. synchronize waits for both queues.
     * NULL: the backend has one order for everything, and both are no-ops. */
    void (*transfers_after_ops)(const struct gd_backend *be);
    void (*ops_after_transfers)(const struct gd_backend *be);

    /* --- model ops (optional) --- */
    void (*embedding_forward)(const struct gd_backend *be, float *out, const int32_t *tokens, const float *table,
                              size_t n, size_t dim);
    void (*embedding_backward)(const struct gd_backend *be, float *dtable, const float *dout,
                               const int32_t *tokens, size_t n, size_t dim, size_t vocab);
    void (*rmsnorm_forward)(const struct gd_backend *be, float *out, float *rstd, const float *inp,
                            const float *weight, size_t n, size_t dim, double eps);
    void (*rmsnorm_backward)(const struct gd_backend *be, float *dinp, float *dweight, const float *dout,
                             const float *inp, const float *weight, const float *rstd, size_t n,
                             size_t dim);
    void (*matmul_forward)(const struct gd_backend *be, float *out, const float *inp, const float *weight,
                           size_t n, size_t in_dim, size_t out_dim);
    void (*matmul_backward)(const struct gd_backend *be, float *dinp, float *dweight, const float *dout,
                            const float *inp, const float *weight, size_t n, size_t in_dim,
                            size_t out_dim);
    void (*rope_forward)(const struct gd_backend *be, float *out, const float *inp, const float *cos_table,
                         const float *sin_table, size_t batch, size_t seq_len, size_t heads,
                         size_t head_dim);
    void (*rope_backward)(const struct gd_backend *be, float *dinp, const float *dout, const float *cos_table,
                          const float *sin_table, size_t batch, size_t seq_len, size_t heads,
                          size_t head_dim);
    void (*attention_forward)(const struct gd_backend *be, float *out, float *att, const float *q, const float *k,
                              const float *v, size_t batch, size_t seq_len, size_t heads,
                              size_t kv_heads, size_t head_dim);
    void (*attention_backward)(const struct gd_backend *be, float *dq, float *dk, float *dv, float *scratch,
                               const float *dout, const float *att, const float *q,
                               const float *k, const float *v, size_t batch, size_t seq_len,
                               size_t heads, size_t kv_heads, size_t head_dim);
    void (*flash_attention_forward)(const struct gd_backend *be, float *out, float *lse,
                                    const float *q, const float *k, const float *v,
                                    size_t batch, size_t seq_len, size_t heads,
                                    size_t kv_heads, size_t head_dim);
    void (*flash_attention_backward)(const struct gd_backend *be, float *dq, float *dk,
                                     float *dv, float *scratch, const float *dout,
                                     const float *attn_out, const float *lse, const float *q,
                                     const float *k, const float *v, size_t batch,
                                     size_t seq_len, size_t heads, size_t kv_heads,
                                     size_t head_dim);
    void (*swiglu_forward)(const struct gd_backend *be, float *out, const float *gate, const float *up, size_t n);
    void (*swiglu_backward)(const struct gd_backend *be, float *dgate, float *dup, const float *dout,
                            const float *gate, const float *up, size_t n);
    void (*add)(const struct gd_backend *be, float *out, const float *a, const float *b, size_t n);
    void (*cross_entropy_forward)(const struct gd_backend *be, float *losses, const float *logits,
                                  const int32_t *targets, size_t n, size_t vocab);
    void (*cross_entropy_backward)(const struct gd_backend *be, float *dlogits, const float *logits,
                                   const int32_t *targets, double dloss, size_t n,
                                   size_t vocab);

    /* --- optimizer and round ops (optional) --- */
    /* start + the sum of squares (kernels/backend.h, GD_SUM_SQUARES_CHUNK). */
    double (*sum_squares)(const struct gd_backend *be, const float *x, size_t n, double start);
    void (*adamw)(const struct gd_backend *be, float *param, const float *grad, float *m, float *v, size_t n,
                  double lr, double beta1, double beta2, double eps, double weight_decay,
                  double bc1, double bc2, double grad_scale);
    void (*adamw_bf16)(const struct gd_backend *be, float *param, const float *grad, uint16_t *m,
                       uint16_t *v, size_t n, double lr, double beta1, double beta2, double eps,
                       double weight_decay, double bc1, double bc2, double grad_scale);
    void (*pseudo_gradient)(const struct gd_backend *be, float *delta, const float *start, const float *params,
                            float *residual, size_t n, float residual_decay);
    void (*weighted_add)(const struct gd_backend *be, float *acc, const float *delta, float weight,
                         size_t n);
    void (*nesterov_step)(const struct gd_backend *be, float *params, float *momentum,
                          const float *acc, size_t n, float lr, float mu);

    /* --- codec ops (optional) --- */
    void (*quantize_blocks)(const struct gd_backend *be, int8_t *q, float *scales, float *decoded,
                            const float *x, size_t n, size_t block, float limit);
    void (*dequantize_blocks)(const struct gd_backend *be, float *y, const int8_t *q,
                              const float *scales, size_t n, size_t block);
    void (*bf16_quantize)(const struct gd_backend *be, uint16_t *h, float *decoded, const float *x,
                          size_t n);
    void (*bf16_dequantize)(const struct gd_backend *be, float *y, const uint16_t *h, size_t n);
} gd_backend_iface;

/* A backend in use. pool runs host work: the fallbacks, and for the CPU
 * backend the ops themselves. It may be NULL (the caller's thread).
 * profile, when set, is where the dispatcher adds up the time of each op
 * (kernels/backend_profile.h); NULL, the usual case, costs one test per op. */
typedef struct gd_backend {
    const gd_backend_iface *iface;
    void *ctx;
    gd_pool *pool;
    struct gd_backend_profile *profile;
} gd_backend;

/* The CPU backend over pool (borrowed; may be NULL): buffers are host
 * memory and every slot is a kernels/cpu op. It holds nothing to free. */
void gd_backend_cpu_init(gd_backend *out, gd_pool *pool);

/* --- buffers ---------------------------------------------------------------------- */

/* count floats (or int32 values) of zeroed backend memory; NULL if there is
 * not enough or the size overflows. */
float *gd_backend_alloc_f32(const gd_backend *be, size_t count);
int32_t *gd_backend_alloc_i32(const gd_backend *be, size_t count);
uint16_t *gd_backend_alloc_u16(const gd_backend *be, size_t count); /* bf16 codes */
void gd_backend_free(const gd_backend *be, void *buf);
void gd_backend_upload(const gd_backend *be, void *dst, const void *host_src, size_t bytes);
void gd_backend_download(const gd_backend *be, void *host_dst, const void *src, size_t bytes);
void gd_backend_copy(const gd_backend *be, void *dst, const void *src, size_t bytes);
void gd_backend_zero(const gd_backend *be, void *dst, size_t bytes);
void gd_backend_synchronize(const gd_backend *be);
void gd_backend_transfers_after_ops(const gd_backend *be);
void gd_backend_ops_after_transfers(const gd_backend *be);
/* count floats of host memory for this backend's transfers (pinned on a
 * GPU), uninitialised; NULL if there is not enough or the size overflows.
 * Free with gd_backend_host_free on the same backend. */
float *gd_backend_host_alloc_f32(const gd_backend *be, size_t count);
void gd_backend_host_free(const gd_backend *be, void *buf);

/* Staging a host array for an op: on a host-memory backend the array
 * itself, else a new buffer holding its count floats (NULL if there is not
 * enough memory). gd_backend_unstage downloads the buffer back into host
 * when write_back is set and frees it; on a host-memory backend it does
 * nothing. */
float *gd_backend_stage(const gd_backend *be, const float *host, size_t count);
void gd_backend_unstage(const gd_backend *be, float *staged, float *host, size_t count,
                        bool write_back);

/* --- ops: the CPU op of the same name, on backend buffers ------------------------------ */

void gd_backend_embedding_forward(const gd_backend *be, float *out, const int32_t *tokens,
                                  const float *table, size_t n, size_t dim, size_t vocab);
void gd_backend_embedding_backward(const gd_backend *be, float *dtable, const float *dout,
                                   const int32_t *tokens, size_t n, size_t dim, size_t vocab);
void gd_backend_rmsnorm_forward(const gd_backend *be, float *out, float *rstd, const float *inp,
                                const float *weight, size_t n, size_t dim, double eps);
void gd_backend_rmsnorm_backward(const gd_backend *be, float *dinp, float *dweight,
                                 const float *dout, const float *inp, const float *weight,
                                 const float *rstd, size_t n, size_t dim);
void gd_backend_matmul_forward(const gd_backend *be, float *out, const float *inp,
                               const float *weight, size_t n, size_t in_dim, size_t out_dim);
void gd_backend_matmul_backward(const gd_backend *be, float *dinp, float *dweight,
                                const float *dout, const float *inp, const float *weight,
                                size_t n, size_t in_dim, size_t out_dim);
/* The RoPE tables of ops.h's gd_cpu_rope_tables, computed on the host (in
 * double, rounded once, so every backend gets the same bits) and uploaded:
 * max_pos rows of head_dim / 2. */
void gd_backend_rope_tables(const gd_backend *be, float *cos_table, float *sin_table,
                            size_t max_pos, size_t head_dim, double theta);
void gd_backend_rope_forward(const gd_backend *be, float *out, const float *inp,
                             const float *cos_table, const float *sin_table, size_t batch,
                             size_t seq_len, size_t heads, size_t head_dim);
void gd_backend_rope_backward(const gd_backend *be, float *dinp, const float *dout,
                              const float *cos_table, const float *sin_table, size_t batch,
                              size_t seq_len, size_t heads, size_t head_dim);
void gd_backend_attention_forward(const gd_backend *be, float *out, float *att, const float *q,
                                  const float *k, const float *v, size_t batch, size_t seq_len,
                                  size_t heads, size_t kv_heads, size_t head_dim);
void gd_backend_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                   float *scratch, const float *dout, const float *att,
                                   const float *q, const float *k, const float *v, size_t batch,
                                   size_t seq_len, size_t heads, size_t kv_heads,
                                   size_t head_dim);
/* Attention without the T x T probabilities (ops_api.h's flash ops): lse
 * (B, heads, T) is what the backward needs beside q, k, v and out; scratch
 * (B, heads, T) is the backward's workspace. */
void gd_backend_flash_attention_forward(const gd_backend *be, float *out, float *lse,
                                        const float *q, const float *k, const float *v,
                                        size_t batch, size_t seq_len, size_t heads,
                                        size_t kv_heads, size_t head_dim);
void gd_backend_flash_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                         float *scratch, const float *dout, const float *attn_out,
                                         const float *lse, const float *q, const float *k,
                                         const float *v, size_t batch, size_t seq_len,
                                         size_t heads, size_t kv_heads, size_t head_dim);
void gd_backend_swiglu_forward(const gd_backend *be, float *out, const float *gate,
                               const float *up, size_t n);
void gd_backend_swiglu_backward(const gd_backend *be, float *dgate, float *dup,
                                const float *dout, const float *gate, const float *up,
                                size_t n);
void gd_backend_add(const gd_backend *be, float *out, const float *a, const float *b, size_t n);
void gd_backend_cross_entropy_forward(const gd_backend *be, float *losses, const float *logits,
                                      const int32_t *targets, size_t n, size_t vocab);
void gd_backend_cross_entropy_backward(const gd_backend *be, float *dlogits,
                                       const float *logits, const int32_t *targets,
                                       double dloss, size_t n, size_t vocab);
/* The sum of squares of x, in a fixed order on every backend: each chunk of
 * GD_SUM_SQUARES_CHUNK values summed in double, then the chunks' partials
 * added one by one to start (0 for gd_backend_sum_squares). So ranges that
 * begin at multiples of the chunk chain exactly: the sum over [0, a) passed
 * as start to the sum over [a, n) gives the bits of the sum over [0, n),
 * whichever backends hold the two ranges. */
#define GD_SUM_SQUARES_CHUNK ((size_t)1 << 16)
double gd_backend_sum_squares(const gd_backend *be, const float *x, size_t n);
double gd_backend_sum_squares_from(const gd_backend *be, const float *x, size_t n,
                                   double start);
void gd_backend_adamw(const gd_backend *be, float *param, const float *grad, float *m,
                      float *v, size_t n, double lr, double beta1, double beta2, double eps,
                      double weight_decay, double bc1, double bc2, double grad_scale);
/* AdamW with its moments stored as bf16 codes (kernels/cpu/ops_api.h's
 * gd_cpu_adamw_bf16): the bits of gd_backend_adamw on the decoded moments,
 * then the new moments rounded to their codes. */
void gd_backend_adamw_bf16(const gd_backend *be, float *param, const float *grad, uint16_t *m,
                           uint16_t *v, size_t n, double lr, double beta1, double beta2,
                           double eps, double weight_decay, double bc1, double bc2,
                           double grad_scale);
/* delta = start - params; then, if residual is not NULL and decay != 1,
 * residual *= decay. Bit-identical to the CPU reference on every backend. */
void gd_backend_pseudo_gradient(const gd_backend *be, float *delta, const float *start,
                                const float *params, float *residual, size_t n, float decay);
/* The outer step in two ops (kernels/cpu/round_ops.h): acc += weight *
 * delta, once per contribution in the aggregate's order from a zeroed acc;
 * then the Nesterov step of params and momentum by acc. Bit-identical to
 * the CPU reference on every backend. */
void gd_backend_weighted_add(const gd_backend *be, float *acc, const float *delta, float weight,
                             size_t n);
void gd_backend_nesterov_step(const gd_backend *be, float *params, float *momentum,
                              const float *acc, size_t n, float lr, float mu);
/* The codecs' arithmetic (kernels/cpu/codec_ops.h, which states the rule
 * and what non-finite input gives): block quantisation with block
 * GD_QUANT_BLOCK_INT8 or GD_QUANT_BLOCK_INT4 (scales holds one float per
 * block, the last one possibly short; decoded may be NULL or x), its
 * inverse, and bfloat16 rounding and its inverse. Bit-identical to the CPU
 * reference on every backend. A dequantize's output must not overlap its
 * codes (checked: the process stops). */
void gd_backend_quantize_blocks(const gd_backend *be, int8_t *q, float *scales, float *decoded,
                                const float *x, size_t n, size_t block, float limit);
void gd_backend_dequantize_blocks(const gd_backend *be, float *y, const int8_t *q,
                                  const float *scales, size_t n, size_t block);
void gd_backend_bf16_quantize(const gd_backend *be, uint16_t *h, float *decoded, const float *x,
                              size_t n);
void gd_backend_bf16_dequantize(const gd_backend *be, float *y, const uint16_t *h, size_t n);
/* out[i] = x[i] rounded to bfloat16 by the rule above, as a float (out may
 * be x): where a bf16 run stores an activation or a moment
 * (trainer/settings.h). Bit-identical to the CPU reference on every
 * backend. */
void gd_backend_bf16_round(const gd_backend *be, float *out, const float *x, size_t n);

#endif
