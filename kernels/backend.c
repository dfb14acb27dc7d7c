/* The backend dispatcher (see kernels/backend.h): each op goes to its slot,
 * or, where the backend leaves the slot NULL, to the CPU op on host copies
 * of its arguments. */
#include "kernels/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend_profile.h"
#include "kernels/cpu/codec_ops.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/round_ops.h"

/* --- buffers ---------------------------------------------------------------------- */

static void *gd_backend_alloc_bytes(const gd_backend *be, size_t count, size_t size) {
    if (count > SIZE_MAX / size)
        return NULL;
    return be->iface->buffer_alloc(be, count ? count * size : size);
}

float *gd_backend_alloc_f32(const gd_backend *be, size_t count) {
    return gd_backend_alloc_bytes(be, count, sizeof(float));
}

int32_t *gd_backend_alloc_i32(const gd_backend *be, size_t count) {
    return gd_backend_alloc_bytes(be, count, sizeof(int32_t));
}

uint16_t *gd_backend_alloc_u16(const gd_backend *be, size_t count) {
    return gd_backend_alloc_bytes(be, count, sizeof(uint16_t));
}

void gd_backend_free(const gd_backend *be, void *buf) {
    if (buf != NULL)
        be->iface->buffer_free(be, buf);
}

float *gd_backend_host_alloc_f32(const gd_backend *be, size_t count) {
    if (count > SIZE_MAX / sizeof(float))
        return NULL;
    size_t bytes = count ? count * sizeof(float) : sizeof(float);
    return be->iface->host_alloc ? be->iface->host_alloc(be, bytes) : malloc(bytes);
}

void gd_backend_host_free(const gd_backend *be, void *buf) {
    if (buf == NULL)
        return;
    if (be->iface->host_free)
        be->iface->host_free(be, buf);
    else
        free(buf);
}

void gd_backend_upload(const gd_backend *be, void *dst, const void *host_src, size_t bytes) {
    if (bytes == 0)
        return;
    double started = gd_op_start(be);
    be->iface->upload(be, dst, host_src, bytes);
    gd_op_stop(be, started, GD_OP_UPLOAD, 0, 0, 0);
}

void gd_backend_download(const gd_backend *be, void *host_dst, const void *src, size_t bytes) {
    if (bytes == 0)
        return;
    double started = gd_op_start(be);
    be->iface->download(be, host_dst, src, bytes);
    gd_op_stop(be, started, GD_OP_DOWNLOAD, 0, 0, 0);
}

void gd_backend_copy(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    if (bytes == 0 || dst == src)
        return;
    double started = gd_op_start(be);
    be->iface->copy(be, dst, src, bytes);
    gd_op_stop(be, started, GD_OP_COPY, 0, 0, 0);
}

void gd_backend_zero(const gd_backend *be, void *dst, size_t bytes) {
    if (bytes == 0)
        return;
    double started = gd_op_start(be);
    be->iface->zero(be, dst, bytes);
    gd_op_stop(be, started, GD_OP_ZERO, 0, 0, 0);
}

void gd_backend_synchronize(const gd_backend *be) {
    if (be->iface->synchronize != NULL)
        be->iface->synchronize(be);
}

void gd_backend_transfers_after_ops(const gd_backend *be) {
    if (be->iface->transfers_after_ops != NULL)
        be->iface->transfers_after_ops(be);
}

void gd_backend_ops_after_transfers(const gd_backend *be) {
    if (be->iface->ops_after_transfers != NULL)
        be->iface->ops_after_transfers(be);
}

float *gd_backend_stage(const gd_backend *be, const float *host, size_t count) {
    if (be->iface->host_memory)
        return (float *)host;
    float *buf = gd_backend_alloc_f32(be, count);
    if (buf != NULL && host != NULL)
        gd_backend_upload(be, buf, host, count * sizeof(float));
    return buf;
}

void gd_backend_unstage(const gd_backend *be, float *staged, float *host, size_t count,
                        bool write_back) {
    if (be->iface->host_memory || staged == NULL)
        return;
    if (write_back)
        gd_backend_download(be, host, staged, count * sizeof(float));
    gd_backend_free(be, staged);
}

/* --- the fallback: host copies of an op's arguments --------------------------------------
 *
 * An input is downloaded; an output that the op adds into is downloaded and
 * uploaded back; an output the op overwrites is only uploaded back. Host
 * memory for a copy that cannot be had is a local failure (backend.h): the
 * process stops rather than run the op on garbage. */

#define GD_FB_MAX_ARGS 10

typedef struct gd_fb_arg {
    void *dev, *host;
    size_t bytes;
    bool write_back;
} gd_fb_arg;

typedef struct gd_fb {
    const gd_backend *be;
    gd_fb_arg args[GD_FB_MAX_ARGS];
    int n;
} gd_fb;

static void *gd_fb_take(gd_fb *f, const void *dev, size_t count, size_t size, bool download,
                        bool write_back) {
    if (dev == NULL)
        return NULL;
    if (f->n == GD_FB_MAX_ARGS || (count && count > SIZE_MAX / size)) {
        fprintf(stderr, "gonka-diloco: backend %s: fallback arguments out of range\n",
                f->be->iface->name);
        abort();
    }
    size_t bytes = count * size;
    void *host = calloc(1, bytes ? bytes : 1);
    if (host == NULL) {
        fprintf(stderr, "gonka-diloco: backend %s: out of host memory for a %zu-byte copy of "
                        "an op's argument\n",
                f->be->iface->name, bytes);
        abort();
    }
    if (download)
        gd_backend_download(f->be, host, dev, bytes);
    f->args[f->n++] = (gd_fb_arg){(void *)dev, host, bytes, write_back};
    return host;
}

static const float *gd_fb_in(gd_fb *f, const float *dev, size_t count) {
    return gd_fb_take(f, dev, count, sizeof(float), true, false);
}

static const int32_t *gd_fb_in_i32(gd_fb *f, const int32_t *dev, size_t count) {
    return gd_fb_take(f, dev, count, sizeof(int32_t), true, false);
}

static float *gd_fb_inout(gd_fb *f, float *dev, size_t count) {
    return gd_fb_take(f, dev, count, sizeof(float), true, true);
}

static float *gd_fb_out(gd_fb *f, float *dev, size_t count) {
    return gd_fb_take(f, dev, count, sizeof(float), false, true);
}

static void gd_fb_done(gd_fb *f) {
    for (int i = 0; i < f->n; i++) {
        if (f->args[i].write_back)
            gd_backend_upload(f->be, f->args[i].dev, f->args[i].host, f->args[i].bytes);
        free(f->args[i].host);
    }
    f->n = 0;
}

/* --- ops ---------------------------------------------------------------------------- */

/* Model FLOPs for the profile (kernels/backend_profile.h): a matmul's
 * multiply-adds, twice; attention's QK^T and PV over the full T x T square,
 * as bench train counts them (its backward is twice the forward). */
static double gd_matmul_flops(size_t n, size_t in_dim, size_t out_dim) {
    return 2.0 * (double)n * (double)in_dim * (double)out_dim;
}

static double gd_attention_flops(size_t batch, size_t seq_len, size_t heads, size_t head_dim) {
    return 4.0 * (double)batch * (double)heads * (double)seq_len * (double)seq_len *
           (double)head_dim;
}

void gd_backend_embedding_forward(const gd_backend *be, float *out, const int32_t *tokens,
                                  const float *table, size_t n, size_t dim, size_t vocab) {
    double started = gd_op_start(be);
    if (be->iface->embedding_forward) {
        be->iface->embedding_forward(be, out, tokens, table, n, dim);
    } else {
        gd_fb f = {.be = be};
        const int32_t *t = gd_fb_in_i32(&f, tokens, n);
        const float *tab = gd_fb_in(&f, table, vocab * dim);
        gd_cpu_embedding_forward_f32(be->pool, gd_fb_out(&f, out, n * dim), t, tab, n, dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_EMBEDDING_FORWARD, 0, 0, 0);
}

void gd_backend_embedding_backward(const gd_backend *be, float *dtable, const float *dout,
                                   const int32_t *tokens, size_t n, size_t dim, size_t vocab) {
    double started = gd_op_start(be);
    if (be->iface->embedding_backward) {
        be->iface->embedding_backward(be, dtable, dout, tokens, n, dim, vocab);
    } else {
        gd_fb f = {.be = be};
        const float *d = gd_fb_in(&f, dout, n * dim);
        const int32_t *t = gd_fb_in_i32(&f, tokens, n);
        gd_cpu_embedding_backward_f32(be->pool, gd_fb_inout(&f, dtable, vocab * dim), d, t, n, dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_EMBEDDING_BACKWARD, 0, 0, 0);
}

void gd_backend_rmsnorm_forward(const gd_backend *be, float *out, float *rstd, const float *inp,
                                const float *weight, size_t n, size_t dim, double eps) {
    double started = gd_op_start(be);
    if (be->iface->rmsnorm_forward) {
        be->iface->rmsnorm_forward(be, out, rstd, inp, weight, n, dim, eps);
    } else {
        gd_fb f = {.be = be};
        const float *x = gd_fb_in(&f, inp, n * dim), *w = gd_fb_in(&f, weight, dim);
        float *o = gd_fb_out(&f, out, n * dim), *r = gd_fb_out(&f, rstd, n);
        gd_cpu_rmsnorm_forward_f32(be->pool, o, r, x, w, n, dim, eps);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_RMSNORM_FORWARD, 0, 0, 0);
}

void gd_backend_rmsnorm_backward(const gd_backend *be, float *dinp, float *dweight,
                                 const float *dout, const float *inp, const float *weight,
                                 const float *rstd, size_t n, size_t dim) {
    double started = gd_op_start(be);
    if (be->iface->rmsnorm_backward) {
        be->iface->rmsnorm_backward(be, dinp, dweight, dout, inp, weight, rstd, n, dim);
    } else {
        gd_fb f = {.be = be};
        const float *d = gd_fb_in(&f, dout, n * dim), *x = gd_fb_in(&f, inp, n * dim);
        const float *w = gd_fb_in(&f, weight, dim), *r = gd_fb_in(&f, rstd, n);
        float *dx = gd_fb_inout(&f, dinp, n * dim), *dw = gd_fb_inout(&f, dweight, dim);
        gd_cpu_rmsnorm_backward_f32(be->pool, dx, dw, d, x, w, r, n, dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_RMSNORM_BACKWARD, 0, 0, 0);
}

void gd_backend_matmul_forward(const gd_backend *be, float *out, const float *inp,
                               const float *weight, size_t n, size_t in_dim, size_t out_dim) {
    double started = gd_op_start(be);
    if (be->iface->matmul_forward) {
        be->iface->matmul_forward(be, out, inp, weight, n, in_dim, out_dim);
    } else {
        gd_fb f = {.be = be};
        const float *x = gd_fb_in(&f, inp, n * in_dim), *w = gd_fb_in(&f, weight, out_dim * in_dim);
        gd_cpu_matmul_forward_f32(be->pool, gd_fb_out(&f, out, n * out_dim), x, w, n, in_dim,
                                  out_dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_MATMUL_FORWARD, in_dim, out_dim,
               gd_matmul_flops(n, in_dim, out_dim));
}

void gd_backend_matmul_backward(const gd_backend *be, float *dinp, float *dweight,
                                const float *dout, const float *inp, const float *weight,
                                size_t n, size_t in_dim, size_t out_dim) {
    double started = gd_op_start(be);
    if (be->iface->matmul_backward) {
        be->iface->matmul_backward(be, dinp, dweight, dout, inp, weight, n, in_dim,
                                   out_dim);
    } else {
        gd_fb f = {.be = be};
        const float *d = gd_fb_in(&f, dout, n * out_dim), *x = gd_fb_in(&f, inp, n * in_dim);
        const float *w = gd_fb_in(&f, weight, out_dim * in_dim);
        float *dx = gd_fb_inout(&f, dinp, n * in_dim);
        float *dw = gd_fb_inout(&f, dweight, out_dim * in_dim);
        gd_cpu_matmul_backward_f32(be->pool, dx, dw, d, x, w, n, in_dim, out_dim);
        gd_fb_done(&f);
    }
    double products = (dinp != NULL) + (dweight != NULL);
    gd_op_stop(be, started, GD_OP_MATMUL_BACKWARD, in_dim, out_dim,
               products * gd_matmul_flops(n, in_dim, out_dim));
}

void gd_backend_rope_tables(const gd_backend *be, float *cos_table, float *sin_table,
                            size_t max_pos, size_t head_dim, double theta) {
    gd_fb f = {.be = be};
    size_t count = max_pos * (head_dim / 2);
    float *c = gd_fb_out(&f, cos_table, count), *s = gd_fb_out(&f, sin_table, count);
    gd_cpu_rope_tables_f32(c, s, max_pos, head_dim, theta);
    gd_fb_done(&f);
}

void gd_backend_rope_forward(const gd_backend *be, float *out, const float *inp,
                             const float *cos_table, const float *sin_table, size_t batch,
                             size_t seq_len, size_t heads, size_t head_dim) {
    double started = gd_op_start(be);
    if (be->iface->rope_forward) {
        be->iface->rope_forward(be, out, inp, cos_table, sin_table, batch, seq_len, heads,
                                head_dim);
    } else {
        gd_fb f = {.be = be};
        size_t count = batch * seq_len * heads * head_dim, table = seq_len * head_dim / 2;
        const float *x = gd_fb_in(&f, inp, count);
        const float *c = gd_fb_in(&f, cos_table, table), *s = gd_fb_in(&f, sin_table, table);
        gd_cpu_rope_forward_f32(be->pool, gd_fb_out(&f, out, count), x, c, s, batch, seq_len, heads,
                                head_dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ROPE_FORWARD, 0, 0, 0);
}

void gd_backend_rope_backward(const gd_backend *be, float *dinp, const float *dout,
                              const float *cos_table, const float *sin_table, size_t batch,
                              size_t seq_len, size_t heads, size_t head_dim) {
    double started = gd_op_start(be);
    if (be->iface->rope_backward) {
        be->iface->rope_backward(be, dinp, dout, cos_table, sin_table, batch, seq_len,
                                 heads, head_dim);
    } else {
        gd_fb f = {.be = be};
        size_t count = batch * seq_len * heads * head_dim, table = seq_len * head_dim / 2;
        const float *d = gd_fb_in(&f, dout, count);
        const float *c = gd_fb_in(&f, cos_table, table), *s = gd_fb_in(&f, sin_table, table);
        gd_cpu_rope_backward_f32(be->pool, gd_fb_inout(&f, dinp, count), d, c, s, batch, seq_len,
                                 heads, head_dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ROPE_BACKWARD, 0, 0, 0);
}

void gd_backend_attention_forward(const gd_backend *be, float *out, float *att, const float *q,
                                  const float *k, const float *v, size_t batch, size_t seq_len,
                                  size_t heads, size_t kv_heads, size_t head_dim) {
    double started = gd_op_start(be);
    if (be->iface->attention_forward) {
        be->iface->attention_forward(be, out, att, q, k, v, batch, seq_len, heads,
                                     kv_heads, head_dim);
    } else {
        gd_fb f = {.be = be};
        size_t rows = batch * seq_len, scores = batch * heads * seq_len * seq_len;
        const float *hq = gd_fb_in(&f, q, rows * heads * head_dim);
        const float *hk = gd_fb_in(&f, k, rows * kv_heads * head_dim);
        const float *hv = gd_fb_in(&f, v, rows * kv_heads * head_dim);
        float *o = gd_fb_out(&f, out, rows * heads * head_dim), *a = gd_fb_out(&f, att, scores);
        gd_cpu_attention_forward_f32(be->pool, o, a, hq, hk, hv, batch, seq_len, heads, kv_heads,
                                     head_dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ATTENTION_FORWARD, 0, 0,
               gd_attention_flops(batch, seq_len, heads, head_dim));
}

void gd_backend_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                   float *scratch, const float *dout, const float *att,
                                   const float *q, const float *k, const float *v, size_t batch,
                                   size_t seq_len, size_t heads, size_t kv_heads,
                                   size_t head_dim) {
    double started = gd_op_start(be);
    if (be->iface->attention_backward) {
        be->iface->attention_backward(be, dq, dk, dv, scratch, dout, att, q, k, v, batch,
                                      seq_len, heads, kv_heads, head_dim);
    } else {
        gd_fb f = {.be = be};
        size_t rows = batch * seq_len, scores = batch * heads * seq_len * seq_len;
        size_t q_count = rows * heads * head_dim, kv_count = rows * kv_heads * head_dim;
        const float *d = gd_fb_in(&f, dout, q_count), *a = gd_fb_in(&f, att, scores);
        const float *hq = gd_fb_in(&f, q, q_count), *hk = gd_fb_in(&f, k, kv_count);
        const float *hv = gd_fb_in(&f, v, kv_count);
        /* The scratch is the op's own workspace: a host one serves. */
        float *work = calloc(scores ? scores : 1, sizeof *work);
        if (work == NULL) {
            fprintf(stderr, "gonka-diloco: backend %s: out of host memory for attention scratch\n",
                    be->iface->name);
            abort();
        }
        (void)scratch;
        gd_cpu_attention_backward_f32(be->pool, gd_fb_inout(&f, dq, q_count),
                                      gd_fb_inout(&f, dk, kv_count), gd_fb_inout(&f, dv, kv_count),
                                      work, d, a, hq, hk, hv, batch, seq_len, heads, kv_heads,
                                      head_dim);
        free(work);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ATTENTION_BACKWARD, 0, 0,
               2 * gd_attention_flops(batch, seq_len, heads, head_dim));
}

void gd_backend_flash_attention_forward(const gd_backend *be, float *out, float *lse,
                                        const float *q, const float *k, const float *v,
                                        size_t batch, size_t seq_len, size_t heads,
                                        size_t kv_heads, size_t head_dim) {
    double started = gd_op_start(be);
    if (be->iface->flash_attention_forward) {
        be->iface->flash_attention_forward(be, out, lse, q, k, v, batch, seq_len, heads,
                                           kv_heads, head_dim);
    } else {
        gd_fb f = {.be = be};
        size_t rows = batch * seq_len, lses = batch * heads * seq_len;
        const float *hq = gd_fb_in(&f, q, rows * heads * head_dim);
        const float *hk = gd_fb_in(&f, k, rows * kv_heads * head_dim);
        const float *hv = gd_fb_in(&f, v, rows * kv_heads * head_dim);
        float *o = gd_fb_out(&f, out, rows * heads * head_dim), *l = gd_fb_out(&f, lse, lses);
        gd_cpu_flash_attention_forward_f32(be->pool, o, l, hq, hk, hv, batch, seq_len, heads,
                                           kv_heads, head_dim);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_FLASH_ATTENTION_FORWARD, 0, 0,
               gd_attention_flops(batch, seq_len, heads, head_dim));
}

void gd_backend_flash_attention_backward(const gd_backend *be, float *dq, float *dk, float *dv,
                                         float *scratch, const float *dout, const float *attn_out,
                                         const float *lse, const float *q, const float *k,
                                         const float *v, size_t batch, size_t seq_len,
                                         size_t heads, size_t kv_heads, size_t head_dim) {
    double started = gd_op_start(be);
    if (be->iface->flash_attention_backward) {
        be->iface->flash_attention_backward(be, dq, dk, dv, scratch, dout, attn_out, lse, q, k, v,
                                            batch, seq_len, heads, kv_heads, head_dim);
    } else {
        gd_fb f = {.be = be};
        size_t rows = batch * seq_len, lses = batch * heads * seq_len;
        size_t q_count = rows * heads * head_dim, kv_count = rows * kv_heads * head_dim;
        const float *d = gd_fb_in(&f, dout, q_count), *o = gd_fb_in(&f, attn_out, q_count);
        const float *l = gd_fb_in(&f, lse, lses), *hq = gd_fb_in(&f, q, q_count);
        const float *hk = gd_fb_in(&f, k, kv_count), *hv = gd_fb_in(&f, v, kv_count);
        float *work = gd_fb_out(&f, scratch, lses);
        gd_cpu_flash_attention_backward_f32(be->pool, gd_fb_inout(&f, dq, q_count),
                                            gd_fb_inout(&f, dk, kv_count),
                                            gd_fb_inout(&f, dv, kv_count), work, d, o, l, hq,
                                            hk, hv, batch, seq_len, heads, kv_heads, head_dim);
        gd_fb_done(&f);
    }
    /* The forward's work again (the probabilities recomputed), and the
     * backward's two. */
    gd_op_stop(be, started, GD_OP_FLASH_ATTENTION_BACKWARD, 0, 0,
               3 * gd_attention_flops(batch, seq_len, heads, head_dim));
}

void gd_backend_swiglu_forward(const gd_backend *be, float *out, const float *gate,
                               const float *up, size_t n) {
    double started = gd_op_start(be);
    if (be->iface->swiglu_forward) {
        be->iface->swiglu_forward(be, out, gate, up, n);
    } else {
        gd_fb f = {.be = be};
        const float *g = gd_fb_in(&f, gate, n), *u = gd_fb_in(&f, up, n);
        gd_cpu_swiglu_forward_f32(be->pool, gd_fb_out(&f, out, n), g, u, n);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_SWIGLU_FORWARD, 0, 0, 0);
}

void gd_backend_swiglu_backward(const gd_backend *be, float *dgate, float *dup,
                                const float *dout, const float *gate, const float *up,
                                size_t n) {
    double started = gd_op_start(be);
    if (be->iface->swiglu_backward) {
        be->iface->swiglu_backward(be, dgate, dup, dout, gate, up, n);
    } else {
        gd_fb f = {.be = be};
        const float *d = gd_fb_in(&f, dout, n), *g = gd_fb_in(&f, gate, n);
        const float *u = gd_fb_in(&f, up, n);
        gd_cpu_swiglu_backward_f32(be->pool, gd_fb_inout(&f, dgate, n), gd_fb_inout(&f, dup, n), d,
                                   g, u, n);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_SWIGLU_BACKWARD, 0, 0, 0);
}

void gd_backend_add(const gd_backend *be, float *out, const float *a, const float *b,
                    size_t n) {
    double started = gd_op_start(be);
    if (be->iface->add) {
        be->iface->add(be, out, a, b, n);
    } else {
        gd_fb f = {.be = be};
        const float *ha = gd_fb_in(&f, a, n), *hb = gd_fb_in(&f, b, n);
        gd_cpu_add_f32(be->pool, gd_fb_out(&f, out, n), ha, hb, n);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ADD, 0, 0, 0);
}

void gd_backend_cross_entropy_forward(const gd_backend *be, float *losses, const float *logits,
                                      const int32_t *targets, size_t n, size_t vocab) {
    double started = gd_op_start(be);
    if (be->iface->cross_entropy_forward) {
        be->iface->cross_entropy_forward(be, losses, logits, targets, n, vocab);
    } else {
        gd_fb f = {.be = be};
        const float *x = gd_fb_in(&f, logits, n * vocab);
        const int32_t *t = gd_fb_in_i32(&f, targets, n);
        gd_cpu_cross_entropy_forward_f32(be->pool, gd_fb_out(&f, losses, n), x, t, n, vocab);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_CROSS_ENTROPY_FORWARD, 0, 0, 0);
}

void gd_backend_cross_entropy_backward(const gd_backend *be, float *dlogits,
                                       const float *logits, const int32_t *targets,
                                       double dloss, size_t n, size_t vocab) {
    double started = gd_op_start(be);
    if (be->iface->cross_entropy_backward) {
        be->iface->cross_entropy_backward(be, dlogits, logits, targets, dloss, n, vocab);
    } else {
        gd_fb f = {.be = be};
        const float *x = gd_fb_in(&f, logits, n * vocab);
        const int32_t *t = gd_fb_in_i32(&f, targets, n);
        gd_cpu_cross_entropy_backward_f32(be->pool, gd_fb_out(&f, dlogits, n * vocab), x, t, dloss,
                                          n, vocab);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_CROSS_ENTROPY_BACKWARD, 0, 0, 0);
}

_Static_assert(GD_SUM_SQUARES_CHUNK == GD_CPU_SUM_SQUARES_CHUNK,
               "every backend sums squares in the CPU's chunks");

double gd_backend_sum_squares(const gd_backend *be, const float *x, size_t n) {
    return gd_backend_sum_squares_from(be, x, n, 0);
}

double gd_backend_sum_squares_from(const gd_backend *be, const float *x, size_t n,
                                   double start) {
    double started = gd_op_start(be), sum;
    if (be->iface->sum_squares) {
        sum = be->iface->sum_squares(be, x, n, start);
    } else {
        gd_fb f = {.be = be};
        sum = gd_cpu_sum_squares_from_f32(be->pool, gd_fb_in(&f, x, n), n, start);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_SUM_SQUARES, 0, 0, 0);
    return sum;
}

void gd_backend_adamw(const gd_backend *be, float *param, const float *grad, float *m,
                      float *v, size_t n, double lr, double beta1, double beta2, double eps,
                      double weight_decay, double bc1, double bc2, double grad_scale) {
    double started = gd_op_start(be);
    if (be->iface->adamw) {
        be->iface->adamw(be, param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay,
                         bc1, bc2, grad_scale);
    } else {
        gd_fb f = {.be = be};
        const float *g = gd_fb_in(&f, grad, n);
        gd_cpu_adamw_f32(be->pool, gd_fb_inout(&f, param, n), g, gd_fb_inout(&f, m, n),
                         gd_fb_inout(&f, v, n), n, lr, beta1, beta2, eps, weight_decay, bc1, bc2,
                         grad_scale);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ADAMW, 0, 0, 0);
}

void gd_backend_adamw_bf16(const gd_backend *be, float *param, const float *grad, uint16_t *m,
                           uint16_t *v, size_t n, double lr, double beta1, double beta2,
                           double eps, double weight_decay, double bc1, double bc2,
                           double grad_scale) {
    double started = gd_op_start(be);
    if (be->iface->adamw_bf16) {
        be->iface->adamw_bf16(be, param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay,
                              bc1, bc2, grad_scale);
    } else {
        gd_fb f = {.be = be};
        const float *g = gd_fb_in(&f, grad, n);
        gd_cpu_adamw_bf16_f32(be->pool, gd_fb_inout(&f, param, n), g,
                              gd_fb_take(&f, m, n, 2, true, true),
                              gd_fb_take(&f, v, n, 2, true, true), n, lr, beta1, beta2, eps,
                              weight_decay, bc1, bc2, grad_scale);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_ADAMW_BF16, 0, 0, 0);
}

void gd_backend_pseudo_gradient(const gd_backend *be, float *delta, const float *start,
                                const float *params, float *residual, size_t n, float decay) {
    double started = gd_op_start(be);
    if (be->iface->pseudo_gradient) {
        be->iface->pseudo_gradient(be, delta, start, params, residual, n, decay);
    } else {
        gd_fb f = {.be = be};
        const float *s = gd_fb_in(&f, start, n), *p = gd_fb_in(&f, params, n);
        gd_cpu_pseudo_gradient_f32(be->pool, gd_fb_out(&f, delta, n), s, p,
                                   gd_fb_inout(&f, residual, n), n, decay);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_PSEUDO_GRADIENT, 0, 0, 0);
}

void gd_backend_weighted_add(const gd_backend *be, float *acc, const float *delta, float weight,
                             size_t n) {
    double started = gd_op_start(be);
    if (be->iface->weighted_add) {
        be->iface->weighted_add(be, acc, delta, weight, n);
    } else {
        gd_fb f = {.be = be};
        const float *d = gd_fb_in(&f, delta, n);
        gd_cpu_weighted_add_f32(be->pool, gd_fb_inout(&f, acc, n), d, weight, n);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_WEIGHTED_ADD, 0, 0, 0);
}

void gd_backend_nesterov_step(const gd_backend *be, float *params, float *momentum,
                              const float *acc, size_t n, float lr, float mu) {
    double started = gd_op_start(be);
    if (be->iface->nesterov_step) {
        be->iface->nesterov_step(be, params, momentum, acc, n, lr, mu);
    } else {
        gd_fb f = {.be = be};
        const float *a = gd_fb_in(&f, acc, n);
        gd_cpu_nesterov_step_f32(be->pool, gd_fb_inout(&f, params, n), gd_fb_inout(&f, momentum, n),
                                 a, n, lr, mu);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_NESTEROV_STEP, 0, 0, 0);
}

/* --- codec ops --------------------------------------------------------------------- */

static void gd_check_quant_block(const gd_backend *be, size_t block) {
    if (block != GD_QUANT_BLOCK_INT8 && block != GD_QUANT_BLOCK_INT4) {
        fprintf(stderr, "gonka-diloco: backend %s: quantiser block of %zu values (want %d or %d)\n",
                be->iface->name, block, GD_QUANT_BLOCK_INT8, GD_QUANT_BLOCK_INT4);
        abort();
    }
}

static size_t gd_quant_blocks(size_t n, size_t block) { return (n + block - 1) / block; }

void gd_backend_quantize_blocks(const gd_backend *be, int8_t *q, float *scales, float *decoded,
                                const float *x, size_t n, size_t block, float limit) {
    gd_check_quant_block(be, block);
    double started = gd_op_start(be);
    if (be->iface->quantize_blocks) {
        be->iface->quantize_blocks(be, q, scales, decoded, x, n, block, limit);
    } else {
        gd_fb f = {.be = be};
        const float *hx = gd_fb_in(&f, x, n);
        /* decoded == x: the host copies differ, and the write-back of
         * decoded lands on x. */
        gd_cpu_quantize_blocks_f32(be->pool, gd_fb_take(&f, q, n, 1, false, true),
                                   gd_fb_out(&f, scales, gd_quant_blocks(n, block)),
                                   gd_fb_out(&f, decoded, n), hx, n, block, limit);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_QUANTIZE_BLOCKS, 0, 0, 0);
}

void gd_backend_dequantize_blocks(const gd_backend *be, float *y, const int8_t *q,
                                  const float *scales, size_t n, size_t block) {
    gd_check_quant_block(be, block);
    double started = gd_op_start(be);
    if (be->iface->dequantize_blocks) {
        be->iface->dequantize_blocks(be, y, q, scales, n, block);
    } else {
        gd_fb f = {.be = be};
        const int8_t *hq = gd_fb_take(&f, q, n, 1, true, false);
        const float *hs = gd_fb_in(&f, scales, gd_quant_blocks(n, block));
        gd_cpu_dequantize_blocks_f32(be->pool, gd_fb_out(&f, y, n), hq, hs, n, block);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_DEQUANTIZE_BLOCKS, 0, 0, 0);
}

void gd_backend_bf16_quantize(const gd_backend *be, uint16_t *h, float *decoded, const float *x,
                              size_t n) {
    double started = gd_op_start(be);
    if (be->iface->bf16_quantize) {
        be->iface->bf16_quantize(be, h, decoded, x, n);
    } else {
        gd_fb f = {.be = be};
        const float *hx = gd_fb_in(&f, x, n);
        gd_cpu_bf16_quantize_f32(be->pool, gd_fb_take(&f, h, n, 2, false, true),
                                 gd_fb_out(&f, decoded, n), hx, n);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_BF16_QUANTIZE, 0, 0, 0);
}

void gd_backend_bf16_round(const gd_backend *be, float *out, const float *x, size_t n) {
    gd_backend_bf16_quantize(be, NULL, out, x, n);
}

/* An op that widens must not write what it has still to read: on a device
 * the values are written in no set order (train_full.c widens in place, in
 * steps that keep every one disjoint). */
static void gd_check_disjoint(const gd_backend *be, const void *out, size_t out_bytes,
                              const void *in, size_t in_bytes, const char *op) {
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)in;
    if (out_bytes && in_bytes && o < i + in_bytes && i < o + out_bytes) {
        fprintf(stderr, "gonka-diloco: backend %s: %s writes over its own input\n",
                be->iface->name, op);
        abort();
    }
}

void gd_backend_bf16_dequantize(const gd_backend *be, float *y, const uint16_t *h, size_t n) {
    gd_check_disjoint(be, y, n * sizeof(float), h, n * sizeof(uint16_t), "bf16_dequantize");
    double started = gd_op_start(be);
    if (be->iface->bf16_dequantize) {
        be->iface->bf16_dequantize(be, y, h, n);
    } else {
        gd_fb f = {.be = be};
        const uint16_t *hh = gd_fb_take(&f, h, n, 2, true, false);
        gd_cpu_bf16_dequantize_f32(be->pool, gd_fb_out(&f, y, n), hh, n);
        gd_fb_done(&f);
    }
    gd_op_stop(be, started, GD_OP_BF16_DEQUANTIZE, 0, 0, 0);
}
