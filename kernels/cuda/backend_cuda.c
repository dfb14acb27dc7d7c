/* The CUDA backend (see kernels/cuda/backend_cuda.h). C over the CUDA
 * runtime's and cuBLASLt's C APIs; the kernels are in the .cu files. */
#include "kernels/cuda/backend_cuda.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/matmul_lt.h"

/* cuBLASLt gets a fixed workspace of its own, so its choice of algorithm,
 * and with it the bits, never depends on what memory happened to be free. */
#define GD_CUBLAS_WORKSPACE ((size_t)32 << 20)

typedef struct gd_cuda_ctx {
    int device;
    cudaStream_t stream;
    /* The transfer queue (backend.h) and the events that order it against
     * the ops: a wait takes the event's state when it is issued, so one
     * event a direction, recorded anew each time, is enough. */
    cudaStream_t transfers;
    cudaEvent_t ops_mark, transfers_mark;
    gd_lt *lt;        /* the GEMMs, their algorithms pinned per shape */
    void *workspace;  /* cuBLASLt's, GD_CUBLAS_WORKSPACE bytes */
    double *partials;      /* device scratch of partial sums, partials_cap doubles */
    size_t partials_cap;
} gd_cuda_ctx;

/* Every slot starts here: the context's device becomes current, so one host
 * thread (or any thread) may drive several GPUs' backends in turn, as the
 * data-parallel trainer does. Setting the device already current is cheap. */
static gd_cuda_ctx *gd_cuda_use(const gd_backend *be) {
    gd_cuda_ctx *c = be->ctx;
    GD_CUDA_CHECK(cudaSetDevice(c->device));
    return c;
}

static void cuda_sync(const gd_backend *be) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaStreamSynchronize(c->transfers));
    GD_CUDA_CHECK(cudaStreamSynchronize(c->stream));
}

static void cuda_transfers_after_ops(const gd_backend *be) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaEventRecord(c->ops_mark, c->stream));
    GD_CUDA_CHECK(cudaStreamWaitEvent(c->transfers, c->ops_mark, 0));
}

static void cuda_ops_after_transfers(const gd_backend *be) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaEventRecord(c->transfers_mark, c->transfers));
    GD_CUDA_CHECK(cudaStreamWaitEvent(c->stream, c->transfers_mark, 0));
}

static void *cuda_alloc(const gd_backend *be, size_t bytes) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* clears the sticky error of a failed allocation */
        return NULL;
    }
    GD_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, c->stream));
    return p;
}

static void cuda_free(const gd_backend *be, void *buf) {
    cuda_sync(be); /* makes the device current too */
    GD_CUDA_CHECK(cudaFree(buf));
}

/* Page-locked and portable: pinned for every device's copies, whichever
 * is current. */
static void *cuda_host_alloc(const gd_backend *be, size_t bytes) {
    (void)gd_cuda_use(be);
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

static void cuda_host_free(const gd_backend *be, void *buf) {
    cuda_sync(be); /* no copy of this backend's still reads or writes it */
    GD_CUDA_CHECK(cudaFreeHost(buf));
}

static void cuda_upload(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream));
    cuda_sync(be); /* the host may reuse src at once */
}

static void cuda_download(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream));
    cuda_sync(be);
}

static void cuda_copy(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream));
}

static void cuda_zero(const gd_backend *be, void *dst, size_t bytes) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    GD_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, c->stream));
}

/* The context's scratch of partial sums, at least count doubles: ops that
 * reduce in two fixed stages (the sum of squares, RMSNorm's weight
 * gradient) use it one after another on the stream. Growing it waits for
 * the stream, so no kernel still reads the old one. */
static double *gd_cuda_partials(const gd_backend *be, size_t count) {
    gd_cuda_ctx *c = be->ctx;
    if (count > c->partials_cap) {
        if (c->partials != NULL)
            cuda_free(be, c->partials);
        c->partials = cuda_alloc(be, count * sizeof(double));
        c->partials_cap = c->partials ? count : 0;
        if (c->partials == NULL)
            GD_CUDA_FAIL("CUDA", "cudaMalloc", "out of device memory for the partial sums");
    }
    return c->partials;
}

/* --- matmuls: row-major on cuBLAS's column-major ------------------------------------------
 *
 * A row-major (r x c) matrix is cuBLAS's column-major (c x r). So
 * out (n, o) = inp (n, i) . W^T with W (o, i) is, column-major,
 * out' (o x n) = W'^T . inp' where W' (i x o) and inp' (i x n). */

static void gd_gemm(gd_cuda_ctx *c, float *out, cublasOperation_t ta, cublasOperation_t tb, int m,
                    int n, int k, const float *a, int lda, const float *b, int ldb,
                    float beta, int ldc) {
    gd_lt_gemm g = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb,
                    .ldc = ldc, .batch = 1, .ab_type = CUDA_R_32F};
    gd_lt_run(c->lt, c->stream, &g, 1.0f, a, b, beta, out);
}

static void cuda_matmul_forward(const gd_backend *be, float *out, const float *inp, const float *weight,
                                size_t n, size_t in_dim, size_t out_dim) {
    gd_gemm(gd_cuda_use(be), out, CUBLAS_OP_T, CUBLAS_OP_N, (int)out_dim, (int)n, (int)in_dim,
            weight, (int)in_dim, inp, (int)in_dim, 0.0f, (int)out_dim);
}

static void cuda_matmul_backward(const gd_backend *be, float *dinp, float *dweight, const float *dout,
                                 const float *inp, const float *weight, size_t n, size_t in_dim,
                                 size_t out_dim) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    /* dinp' (i x n) += W' (i x o) . dout' (o x n) */
    if (dinp != NULL)
        gd_gemm(c, dinp, CUBLAS_OP_N, CUBLAS_OP_N, (int)in_dim, (int)n, (int)out_dim,
                weight, (int)in_dim, dout, (int)out_dim, 1.0f, (int)in_dim);
    /* dW' (i x o) += inp' (i x n) . dout'^T (n x o) */
    if (dweight != NULL)
        gd_gemm(c, dweight, CUBLAS_OP_N, CUBLAS_OP_T, (int)in_dim, (int)out_dim, (int)n,
                inp, (int)in_dim, dout, (int)out_dim, 1.0f, (int)in_dim);
}

/* --- the model's other ops ------------------------------------------------------------------ */

static void cuda_embedding_forward(const gd_backend *be, float *out, const int32_t *tokens,
                                   const float *table, size_t n, size_t dim) {
    gd_cuda_embedding_forward(out, gd_cuda_use(be)->stream, tokens, table, n, dim);
}

static void cuda_embedding_backward(const gd_backend *be, float *dtable, const float *dout,
                                    const int32_t *tokens, size_t n, size_t dim, size_t vocab) {
    gd_cuda_embedding_backward(gd_cuda_use(be)->stream, dtable, dout, tokens, n, dim, vocab);
}

static void cuda_rmsnorm_forward(const gd_backend *be, float *out, float *rstd, const float *inp,
                                 const float *weight, size_t n, size_t dim, double eps) {
    gd_cuda_rmsnorm_forward(out, gd_cuda_use(be)->stream, rstd, inp, weight, n, dim, eps);
}

static void cuda_rmsnorm_backward(const gd_backend *be, float *dinp, float *dweight, const float *dout,
                                  const float *inp, const float *weight, const float *rstd,
                                  size_t n, size_t dim) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    double *partials =
        dweight != NULL ? gd_cuda_partials(be, gd_cuda_rmsnorm_partials(n, dim)) : NULL;
    gd_cuda_rmsnorm_backward(c->stream, dinp, dweight, dout, inp, weight, rstd, n, dim,
                             partials);
}

static void cuda_rope_forward(const gd_backend *be, float *out, const float *inp, const float *cos_table,
                              const float *sin_table, size_t batch, size_t seq_len,
                              size_t heads, size_t head_dim) {
    gd_cuda_rope_forward(out, gd_cuda_use(be)->stream, inp, cos_table, sin_table, batch, seq_len,
                         heads, head_dim);
}

static void cuda_rope_backward(const gd_backend *be, float *dinp, const float *dout,
                               const float *cos_table, const float *sin_table, size_t batch,
                               size_t seq_len, size_t heads, size_t head_dim) {
    gd_cuda_rope_backward(gd_cuda_use(be)->stream, dinp, dout, cos_table, sin_table, batch, seq_len,
                          heads, head_dim);
}

/* --- attention: GEMMs around the row kernels ------------------------------------------------
 *
 * Per query head h (key/value head h / group), batched over the sequences
 * (a sequence's rows are T * stride apart, its scores heads * T * T):
 *   S = scale Q K^T,  P = causal softmax(S) (into att),  O = P V;
 * backward, with dS in scratch:
 *   dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),
 *   dQ += scale dS K,  dK += scale dS^T Q,  dV += P^T dO,
 * a key/value head's gradients summing its query heads in head order, one
 * GEMM after another (as the CPU op). Row-major (T x d) with row stride s is
 * cuBLAS's column-major (d x T) with leading dimension s; S's rows are T
 * floats. The full T x T product is computed and the softmax masks it: on
 * tensor cores that is still far cheaper than scalar code over half of it. */

typedef struct gd_att_shape {
    int T, hd, q_stride, kv_stride;
    long long q_seq, kv_seq, scores_seq; /* one sequence's stride in each */
    size_t group, batch;
    float scale;
} gd_att_shape;

/* Where query head h's key/value head starts in a row of k or v. */
static size_t gd_att_kv_at(const gd_att_shape *s, size_t h) {
    return h / s->group * (size_t)s->hd;
}

static gd_att_shape gd_att_shape_of(size_t batch, size_t seq_len, size_t heads, size_t kv_heads,
                                    size_t head_dim) {
    gd_att_shape a = {
        .T = (int)seq_len,
        .hd = (int)head_dim,
        .q_stride = (int)(heads * head_dim),
        .kv_stride = (int)(kv_heads * head_dim),
        .group = heads / kv_heads,
        .batch = batch,
        .scale = (float)(1.0 / sqrt((double)head_dim)),
    };
    a.q_seq = (long long)seq_len * a.q_stride;
    a.kv_seq = (long long)seq_len * a.kv_stride;
    a.scores_seq = (long long)(heads * seq_len * seq_len);
    return a;
}

/* One GEMM per sequence of the batch: out_i = alpha op(a_i) op(b_i) + beta out_i. */
static void gd_gemm_seqs(gd_cuda_ctx *c, const gd_att_shape *s, float *out, cublasOperation_t ta,
                         cublasOperation_t tb, int m, int n, int k, float alpha, const float *a,
                         int lda, long long a_seq, const float *b, int ldb, long long b_seq,
                         float beta, int ldc, long long out_seq) {
    gd_lt_gemm g = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb,
                    .ldc = ldc, .batch = (int)s->batch, .ab_type = CUDA_R_32F,
                    .stride_a = a_seq, .stride_b = b_seq, .stride_c = out_seq};
    gd_lt_run(c->lt, c->stream, &g, alpha, a, b, beta, out);
}

static void cuda_attention_forward(const gd_backend *be, float *out, float *att, const float *q,
                                   const float *k, const float *v, size_t batch,
                                   size_t seq_len, size_t heads, size_t kv_heads,
                                   size_t head_dim) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    if (batch == 0 || seq_len == 0 || heads == 0)
        return;
    gd_att_shape s = gd_att_shape_of(batch, seq_len, heads, kv_heads, head_dim);
    size_t TT = seq_len * seq_len;
    for (size_t h = 0; h < heads; h++) {
        const float *kh = k + gd_att_kv_at(&s, h);
        /* S' (T x T) = K'^T Q', scaled */
        gd_gemm_seqs(c, &s, att + h * TT, CUBLAS_OP_T, CUBLAS_OP_N, s.T, s.T, s.hd, s.scale, kh,
                     s.kv_stride, s.kv_seq, q + h * head_dim, s.q_stride, s.q_seq, 0.0f, s.T,
                     s.scores_seq);
    }
    gd_cuda_attention_softmax(c->stream, att, batch * heads * seq_len, seq_len);
    for (size_t h = 0; h < heads; h++) {
        const float *vh = v + gd_att_kv_at(&s, h);
        /* O' (hd x T) = V' P' */
        gd_gemm_seqs(c, &s, out + h * head_dim, CUBLAS_OP_N, CUBLAS_OP_N, s.hd, s.T, s.T, 1.0f, vh,
                     s.kv_stride, s.kv_seq, att + h * TT, s.T, s.scores_seq, 0.0f,
                     s.q_stride, s.q_seq);
    }
}

static void cuda_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                    float *scratch, const float *dout, const float *att,
                                    const float *q, const float *k, const float *v, size_t batch,
                                    size_t seq_len, size_t heads, size_t kv_heads,
                                    size_t head_dim) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    if (batch == 0 || seq_len == 0 || heads == 0)
        return;
    gd_att_shape s = gd_att_shape_of(batch, seq_len, heads, kv_heads, head_dim);
    size_t TT = seq_len * seq_len;
    if (dq != NULL || dk != NULL) {
        for (size_t h = 0; h < heads; h++) {
            const float *vh = v + gd_att_kv_at(&s, h);
            /* dP' (T x T) = V'^T dO' */
            gd_gemm_seqs(c, &s, scratch + h * TT, CUBLAS_OP_T, CUBLAS_OP_N, s.T, s.T, s.hd, 1.0f,
                         vh, s.kv_stride, s.kv_seq, dout + h * head_dim, s.q_stride, s.q_seq,
                         0.0f, s.T, s.scores_seq);
        }
        gd_cuda_attention_softmax_backward(c->stream, scratch, att, batch * heads * seq_len,
                                           seq_len);
    }
    for (size_t h = 0; h < heads; h++) {
        size_t kv_at = gd_att_kv_at(&s, h);
        const float *ds = scratch + h * TT, *p = att + h * TT;
        /* dQ' (hd x T) += scale K' dS' */
        if (dq != NULL)
            gd_gemm_seqs(c, &s, dq + h * head_dim, CUBLAS_OP_N, CUBLAS_OP_N, s.hd, s.T, s.T,
                         s.scale, k + kv_at, s.kv_stride, s.kv_seq, ds, s.T, s.scores_seq, 1.0f,
                         s.q_stride, s.q_seq);
        /* dK' (hd x T) += scale Q' dS'^T, then dV' += dO' P'^T: heads in order */
        if (dk != NULL)
            gd_gemm_seqs(c, &s, dk + kv_at, CUBLAS_OP_N, CUBLAS_OP_T, s.hd, s.T, s.T,
                         s.scale, q + h * head_dim, s.q_stride, s.q_seq, ds, s.T, s.scores_seq,
                         1.0f, s.kv_stride, s.kv_seq);
        if (dv != NULL)
            gd_gemm_seqs(c, &s, dv + kv_at, CUBLAS_OP_N, CUBLAS_OP_T, s.hd, s.T, s.T,
                         1.0f, dout + h * head_dim, s.q_stride, s.q_seq, p, s.T, s.scores_seq,
                         1.0f, s.kv_stride, s.kv_seq);
    }
}

/* Flash attention: the kernels of flash_attention.cu, no GEMMs. */
static void cuda_flash_attention_forward(const gd_backend *be, float *out, float *lse,
                                         const float *q, const float *k, const float *v,
                                         size_t batch, size_t seq_len, size_t heads,
                                         size_t kv_heads, size_t head_dim) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    gd_cuda_flash_attention_forward(c->stream, out, lse, q, k, v, batch, seq_len, heads,
                                    kv_heads, head_dim);
}

static void cuda_flash_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                          float *scratch, const float *dout,
                                          const float *attn_out, const float *lse,
                                          const float *q, const float *k, const float *v,
                                          size_t batch, size_t seq_len, size_t heads,
                                          size_t kv_heads, size_t head_dim) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    gd_cuda_flash_attention_backward(c->stream, dq, dk, dv, scratch, dout, attn_out, lse, q, k,
                                     v, batch, seq_len, heads, kv_heads, head_dim);
}

static void cuda_cross_entropy_forward(const gd_backend *be, float *losses, const float *logits,
                                       const int32_t *targets, size_t n, size_t vocab) {
    gd_cuda_cross_entropy_forward(gd_cuda_use(be)->stream, losses, logits, targets, n, vocab);
}

static void cuda_cross_entropy_backward(const gd_backend *be, float *dlogits, const float *logits,
                                        const int32_t *targets, double dloss, size_t n,
                                        size_t vocab) {
    gd_cuda_cross_entropy_backward(gd_cuda_use(be)->stream, dlogits, logits, targets, dloss, n,
                                   vocab);
}

/* --- elementwise, optimizer, round --------------------------------------------------------- */

static void cuda_add(const gd_backend *be, float *out, const float *a, const float *b, size_t n) {
    gd_cuda_add(out, gd_cuda_use(be)->stream, a, b, n);
}

static void cuda_swiglu_forward(const gd_backend *be, float *out, const float *gate, const float *up,
                                size_t n) {
    gd_cuda_swiglu_forward(out, gd_cuda_use(be)->stream, gate, up, n);
}

static void cuda_swiglu_backward(const gd_backend *be, float *dgate, float *dup, const float *dout,
                                 const float *gate, const float *up, size_t n) {
    gd_cuda_swiglu_backward(gd_cuda_use(be)->stream, dgate, dup, dout, gate, up, n);
}

/* The CPU op's scalars, each derived in double and rounded once. */
static gd_cuda_adamw_scalars cuda_adamw_scalars(double lr, double beta1, double beta2,
                                                double eps, double weight_decay, double bc1,
                                                double bc2, double grad_scale) {
    return (gd_cuda_adamw_scalars){
        .grad_scale = (float)grad_scale,
        .decay = (float)(1.0 - lr * weight_decay),
        .beta1 = (float)beta1,
        .one_minus_beta1 = (float)(1.0 - beta1),
        .beta2 = (float)beta2,
        .one_minus_beta2 = (float)(1.0 - beta2),
        .step_size = (float)(lr / bc1),
        .bc2_sqrt = (float)sqrt(bc2),
        .eps = (float)eps,
    };
}

static void cuda_adamw(const gd_backend *be, float *param, const float *grad, float *m, float *v, size_t n,
                       double lr, double beta1, double beta2, double eps, double weight_decay,
                       double bc1, double bc2, double grad_scale) {
    gd_cuda_adamw_scalars s = cuda_adamw_scalars(lr, beta1, beta2, eps, weight_decay, bc1, bc2,
                                                 grad_scale);
    gd_cuda_adamw(gd_cuda_use(be)->stream, param, grad, m, v, n, &s);
}

static void cuda_adamw_bf16(const gd_backend *be, float *param, const float *grad, uint16_t *m,
                            uint16_t *v, size_t n, double lr, double beta1, double beta2,
                            double eps, double weight_decay, double bc1, double bc2,
                            double grad_scale) {
    gd_cuda_adamw_scalars s = cuda_adamw_scalars(lr, beta1, beta2, eps, weight_decay, bc1, bc2,
                                                 grad_scale);
    gd_cuda_adamw_bf16(gd_cuda_use(be)->stream, param, grad, m, v, n, &s);
}

/* The chunks of every backend (GD_SUM_SQUARES_CHUNK, kernels/backend.h): the
 * partials must be the same to give the same bits. */
static double cuda_sum_squares(const gd_backend *be, const float *x, size_t n, double start) {
    gd_cuda_ctx *c = gd_cuda_use(be);
    size_t chunks = (n + GD_SUM_SQUARES_CHUNK - 1) / GD_SUM_SQUARES_CHUNK;
    if (chunks == 0)
        return start;
    double *partials = gd_cuda_partials(be, chunks);
    gd_cuda_sum_squares_chunks(c->stream, partials, x, n, GD_SUM_SQUARES_CHUNK);
    double *host = malloc(chunks * sizeof(double));
    if (host == NULL)
        GD_CUDA_FAIL("host", "malloc", "out of host memory for the partial sums");
    cuda_download(be, host, partials, chunks * sizeof(double));
    double total = start;
    for (size_t i = 0; i < chunks; i++)
        total += host[i];
    free(host);
    return total;
}

static void cuda_pseudo_gradient(const gd_backend *be, float *delta, const float *start,
                                 const float *params, float *residual, size_t n, float decay) {
    gd_cuda_pseudo_gradient(gd_cuda_use(be)->stream, delta, start, params, residual, n,
                            decay);
}

static void cuda_weighted_add(const gd_backend *be, float *acc, const float *delta,
                              float weight, size_t n) {
    gd_cuda_weighted_add(gd_cuda_use(be)->stream, acc, delta, weight, n);
}

static void cuda_nesterov_step(const gd_backend *be, float *params, float *momentum,
                               const float *acc, size_t n, float lr, float mu) {
    gd_cuda_nesterov_step(gd_cuda_use(be)->stream, params, momentum, acc, n, lr, mu);
}

static void cuda_quantize_blocks(const gd_backend *be, int8_t *q, float *scales,
                                 float *decoded, const float *x, size_t n, size_t block,
                                 float limit) {
    gd_cuda_quantize_blocks(gd_cuda_use(be)->stream, q, scales, decoded, x, n, block, limit);
}

static void cuda_dequantize_blocks(const gd_backend *be, float *y, const int8_t *q,
                                   const float *scales, size_t n, size_t block) {
    gd_cuda_dequantize_blocks(gd_cuda_use(be)->stream, y, q, scales, n, block);
}

static void cuda_bf16_quantize(const gd_backend *be, uint16_t *h, float *decoded,
                               const float *x, size_t n) {
    gd_cuda_bf16_quantize(gd_cuda_use(be)->stream, h, decoded, x, n);
}

static void cuda_bf16_dequantize(const gd_backend *be, float *y, const uint16_t *h, size_t n) {
    gd_cuda_bf16_dequantize(gd_cuda_use(be)->stream, y, h, n);
}

static const gd_backend_iface gd_cuda_iface = {
    .name = "cuda",
    .host_memory = false,
    .buffer_alloc = cuda_alloc,
    .buffer_free = cuda_free,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .copy = cuda_copy,
    .zero = cuda_zero,
    .synchronize = cuda_sync,
    .transfers_after_ops = cuda_transfers_after_ops,
    .ops_after_transfers = cuda_ops_after_transfers,
    .embedding_forward = cuda_embedding_forward,
    .embedding_backward = cuda_embedding_backward,
    .rmsnorm_forward = cuda_rmsnorm_forward,
    .rmsnorm_backward = cuda_rmsnorm_backward,
    .matmul_forward = cuda_matmul_forward,
    .matmul_backward = cuda_matmul_backward,
    .rope_forward = cuda_rope_forward,
    .rope_backward = cuda_rope_backward,
    .attention_forward = cuda_attention_forward,
    .attention_backward = cuda_attention_backward,
    .flash_attention_forward = cuda_flash_attention_forward,
    .flash_attention_backward = cuda_flash_attention_backward,
    .cross_entropy_forward = cuda_cross_entropy_forward,
    .cross_entropy_backward = cuda_cross_entropy_backward,
    .swiglu_forward = cuda_swiglu_forward,
    .swiglu_backward = cuda_swiglu_backward,
    .add = cuda_add,
    .sum_squares = cuda_sum_squares,
    .adamw = cuda_adamw,
    .adamw_bf16 = cuda_adamw_bf16,
    .pseudo_gradient = cuda_pseudo_gradient,
    .weighted_add = cuda_weighted_add,
    .nesterov_step = cuda_nesterov_step,
    .quantize_blocks = cuda_quantize_blocks,
    .dequantize_blocks = cuda_dequantize_blocks,
    .bf16_quantize = cuda_bf16_quantize,
    .bf16_dequantize = cuda_bf16_dequantize,
};

/* --- opening ------------------------------------------------------------------------------- */

bool gd_backend_cuda_usable(char *why, size_t cap) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(why, cap, "no usable GPU: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        return false;
    }
    if (count == 0) {
        snprintf(why, cap, "no GPU found");
        return false;
    }
    snprintf(why, cap, "%d GPU%s", count, count == 1 ? "" : "s");
    return true;
}

static void gd_cuda_queues_free(gd_cuda_ctx *c) {
    GD_CUDA_CHECK(cudaEventDestroy(c->ops_mark));
    GD_CUDA_CHECK(cudaEventDestroy(c->transfers_mark));
    GD_CUDA_CHECK(cudaStreamDestroy(c->transfers));
    GD_CUDA_CHECK(cudaStreamDestroy(c->stream));
}

gd_status gd_backend_cuda_open(gd_backend *out, int device, gd_pool *pool) {
    char why[256];
    if (!gd_backend_cuda_usable(why, sizeof why))
        return gd_fail(GD_ERR_NOT_FOUND, "the cuda backend cannot start: %s", why);
    int count = 0;
    GD_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        return gd_fail(GD_ERR_INVALID, "GPU %d does not exist (this host has %d)", device,
                       count);
    const gd_cublaslt_api *lt = gd_cublaslt_load(why, sizeof why);
    if (lt == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "the cuda backend cannot start: %s", why);
    gd_cuda_ctx *c = calloc(1, sizeof *c);
    if (c == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    c->device = device;
    GD_CUDA_CHECK(cudaSetDevice(device));
    GD_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    GD_CUDA_CHECK(cudaStreamCreateWithFlags(&c->transfers, cudaStreamNonBlocking));
    GD_CUDA_CHECK(cudaEventCreateWithFlags(&c->ops_mark, cudaEventDisableTiming));
    GD_CUDA_CHECK(cudaEventCreateWithFlags(&c->transfers_mark, cudaEventDisableTiming));
    gd_status s = GD_OK;
    if (cudaMalloc(&c->workspace, GD_CUBLAS_WORKSPACE) != cudaSuccess) {
        (void)cudaGetLastError();
        c->workspace = NULL;
        s = gd_fail(GD_ERR_NOMEM, "out of GPU memory for cuBLASLt's workspace");
    }
    if (s == GD_OK)
        s = gd_lt_open(&c->lt, lt, c->workspace, GD_CUBLAS_WORKSPACE);
    if (s != GD_OK) {
        if (c->workspace != NULL)
            GD_CUDA_CHECK(cudaFree(c->workspace));
        gd_cuda_queues_free(c);
        free(c);
        return s;
    }
    *out = (gd_backend){.iface = &gd_cuda_iface, .ctx = c, .pool = pool};
    return GD_OK;
}

void gd_backend_cuda_close(gd_backend *be) {
    if (be == NULL || be->ctx == NULL)
        return;
    gd_cuda_ctx *c = gd_cuda_use(be); /* its memory and stream are freed on its device */
    cuda_sync(be);
    if (c->partials != NULL)
        GD_CUDA_CHECK(cudaFree(c->partials));
    gd_lt_close(c->lt);
    GD_CUDA_CHECK(cudaFree(c->workspace));
    gd_cuda_queues_free(c);
    free(c);
    be->ctx = NULL;
}

bool gd_backend_cuda_is(const gd_backend *be) {
    return be != NULL && be->iface == &gd_cuda_iface;
}

int gd_backend_cuda_device(const gd_backend *be) {
    const gd_cuda_ctx *c = be->ctx;
    return c->device;
}

void *gd_backend_cuda_stream(const gd_backend *be) {
    const gd_cuda_ctx *c = be->ctx;
    return c->stream;
}

void *gd_backend_cuda_transfer_stream(const gd_backend *be) {
    const gd_cuda_ctx *c = be->ctx;
    return c->transfers;
}

size_t gd_backend_cuda_gemm_plans(const gd_backend *be) {
    const gd_cuda_ctx *c = be->ctx;
    return gd_lt_plans(c->lt);
}

/* SHA-256 of the file that holds this code (the program, or the library a
 * host loaded), its first 16 hex digits; "unknown" where it cannot be
 * read. Computed once: it does not change while the process runs. */
static char gd_cuda_binary_digest[17];
static pthread_once_t gd_cuda_binary_once = PTHREAD_ONCE_INIT;

static void gd_cuda_binary_hash(void) {
    snprintf(gd_cuda_binary_digest, sizeof gd_cuda_binary_digest, "unknown");
    Dl_info info;
    if (dladdr(gd_cuda_binary_digest, &info) == 0 || info.dli_fname == NULL)
        return;
    FILE *f = fopen(info.dli_fname, "rb");
    gd_sha256_ctx *ctx = NULL;
    if (f == NULL || gd_sha256_begin(&ctx) != GD_OK) {
        if (f)
            fclose(f);
        return;
    }
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        gd_sha256_update(ctx, buf, n);
    bool ok = !ferror(f);
    fclose(f);
    uint8_t digest[GD_SHA256_LEN];
    gd_sha256_finish(ctx, digest);
    if (ok)
        gd_hex_encode(gd_cuda_binary_digest, digest, 8, false);
}

gd_status gd_backend_cuda_memory(uint64_t *out, int device) {
    char why[256];
    if (!gd_backend_cuda_usable(why, sizeof why))
        return gd_fail(GD_ERR_NOT_FOUND, "the cuda backend cannot start: %s", why);
    struct cudaDeviceProp prop;
    GD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    *out = (uint64_t)prop.totalGlobalMem;
    return GD_OK;
}

gd_status gd_backend_cuda_identity(char *out, size_t cap, int device) {
    char why[256];
    if (!gd_backend_cuda_usable(why, sizeof why))
        return gd_fail(GD_ERR_NOT_FOUND, "the cuda backend cannot start: %s", why);
    struct cudaDeviceProp prop;
    GD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    int driver = 0, runtime = 0;
    GD_CUDA_CHECK(cudaDriverGetVersion(&driver));
    GD_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    const gd_cublaslt_api *lt = gd_cublaslt_load(why, sizeof why);
    if (lt == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "the cuda backend cannot start: %s", why);
    size_t blas = lt->get_version(); /* cuBLASLt ships with cuBLAS, under its version */
    /* What decides cuBLAS's bits: the GPU (its model, compute capability
     * and SM count: the algorithms' split-K and tiling depend on it), the
     * driver, CUDA and cuBLAS; and what decides the kernels' bits: their
     * sources and the binary compiled from them. */
    pthread_once(&gd_cuda_binary_once, gd_cuda_binary_hash);
    int n = snprintf(out, cap, "gpu=%s; sm=%d.%d; sms=%d; driver=%d; cuda=%d; cublas=%zu; "
                               "kernels=%s; binary=%s",
                     prop.name, prop.major, prop.minor, prop.multiProcessorCount, driver, runtime,
                     blas, GD_CUDA_KERNELS_HASH, gd_cuda_binary_digest);
    if (n < 0 || (size_t)n >= cap)
        return gd_fail(GD_ERR_LIMIT, "the identity does not fit %zu bytes", cap);
    return GD_OK;
}
