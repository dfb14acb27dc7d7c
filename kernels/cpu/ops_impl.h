/* The bodies of the CPU reference ops (kernels/cpu/ops.h).
 *
 * This file is a template, not a header: kernels/cpu/ops_f32.c and
 * kernels/cpu/ops_f64.c each define the macros below and include it once.
 * One source gives both precisions so they cannot drift apart: f32 is what
 * trains, f64 runs the very same code under the finite-difference gradient
 * checks, where float rounding would hide a wrong derivative.
 *
 * The includer defines:
 *   GD_REAL        float or double
 *   GD_OP(name)    name##_f32 or name##_f64 (the public names of ops_api.h)
 *   GD_EXP(x)      expf or exp
 *   GD_SQRT(x)     sqrtf or sqrt
 *   GD_GEMM        cblas_sgemm or cblas_dgemm
 * Everything else here is static, so the two instantiations never clash.
 *
 * How the work is split (the determinism contract of ops.h): every op is a
 * set of tasks whose boundaries come from the shapes and the constants
 * below, never from the pool's thread count; each output element is written
 * by exactly one task, and every sum runs in a fixed order inside its task.
 * So the bits of an output are the same for a NULL pool or any number of
 * threads. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu/ops.h"

/* --- work splitting ------------------------------------------------------------ */

/* Matmul output tiles. A tile is one single-threaded GEMM call that carries
 * the full K reduction, so an output element's bits depend on the tile grid,
 * which depends only on the shapes. 256 x 512: OpenBLAS packs both input
 * panels of every call, and tiles this size keep that copying to a few
 * percent of the multiply-adds (measured with `gonka-diloco bench train`:
 * 128 x 256 tiles spent ~12% of a step packing and trained ~5% slower on
 * one thread), while a layer of a few thousand rows and columns still
 * gives tens of tiles to balance over the threads. Powers of two are whole
 * multiples of the usual micro-tile sizes, so only the last tile of a row
 * or column of tiles takes OpenBLAS's edge kernels. */
#define GD_MM_TILE_ROWS ((size_t)256)
#define GD_MM_TILE_COLS ((size_t)512)

/* Elements per task of elementwise and row-wise work: 16 Ki elements
 * (64 KiB of floats) hide the pool's per-task cost (one atomic claim) and
 * still give a few-million-element tensor hundreds of tasks. */
#define GD_TASK_ELEMS ((size_t)1 << 14)

/* Columns per task where a task walks all rows of a column block (RMSNorm
 * dweight, embedding backward): 64 columns are four cache lines of floats
 * per row visited, and the block's double accumulators fit on the stack. */
#define GD_COL_BLOCK ((size_t)64)

/* Attention processes query rows in blocks of 64: block [r0, r1) needs
 * keys [0, r1) only, so the GEMMs skip most of the masked upper triangle
 * (at T = 256, 10 of 16 blocks of the square are computed) while each GEMM
 * stays large enough to run near OpenBLAS's speed. */
#define GD_ATT_BLOCK ((size_t)64)

/* sum_squares: fixed chunks, each summed in double; the partials of up to
 * GD_SUMSQ_ROUND chunks live on the stack (no malloc), and long inputs run
 * in rounds whose partials are still added in chunk order. */
#define GD_SUMSQ_CHUNK ((size_t)1 << 16)
#define GD_SUMSQ_ROUND 64

static size_t gd_ops_ceil_div(size_t a, size_t b) {
    return (a + b - 1) / b;
}

static size_t gd_ops_min(size_t a, size_t b) {
    return a < b ? a : b;
}

/* Rows of length row_len per row-wise task (at least one). */
static size_t gd_ops_rows_per_task(size_t row_len) {
    return row_len >= GD_TASK_ELEMS ? 1 : GD_TASK_ELEMS / (row_len > 0 ? row_len : 1);
}

/* CBLAS takes int sizes; a leading dimension must be at least 1 even when
 * the matrix is empty. Sizes are trusted (ops.h), so the cast is safe. */
static blasint gd_ops_bi(size_t x) {
    return (blasint)x;
}

static blasint gd_ops_ld(size_t x) {
    return (blasint)(x > 0 ? x : 1);
}

/* One tile of a rows x cols output split into GD_MM_TILE_ROWS x
 * GD_MM_TILE_COLS tiles, numbered row-major. */
typedef struct gd_ops_tile {
    size_t r0, rows, c0, cols;
} gd_ops_tile;

static size_t gd_ops_tile_count(size_t rows, size_t cols) {
    return gd_ops_ceil_div(rows, GD_MM_TILE_ROWS) * gd_ops_ceil_div(cols, GD_MM_TILE_COLS);
}

static gd_ops_tile gd_ops_tile_at(size_t rows, size_t cols, size_t index) {
    size_t col_tiles = gd_ops_ceil_div(cols, GD_MM_TILE_COLS);
    gd_ops_tile t;
    t.r0 = index / col_tiles * GD_MM_TILE_ROWS;
    t.c0 = index % col_tiles * GD_MM_TILE_COLS;
    t.rows = gd_ops_min(GD_MM_TILE_ROWS, rows - t.r0);
    t.cols = gd_ops_min(GD_MM_TILE_COLS, cols - t.c0);
    return t;
}

/* Elements [*lo, *hi) of task `task` when n elements are cut into chunks. */
static void gd_ops_range(size_t task, size_t chunk, size_t n, size_t *lo, size_t *hi) {
    *lo = task * chunk;
    *hi = gd_ops_min(*lo + chunk, n);
}

/* --- embedding ----------------------------------------------------------------- */

typedef struct gd_ops_embedding_ctx {
    GD_REAL *out;          /* forward: out; backward: dtable */
    const GD_REAL *in;     /* forward: table; backward: dout */
    const int32_t *tokens;
    size_t n, dim, rows_per_task;
} gd_ops_embedding_ctx;

static void gd_ops_embedding_forward_task(void *arg, size_t task) {
    const gd_ops_embedding_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, c->rows_per_task, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        memcpy(c->out + i * c->dim, c->in + (size_t)c->tokens[i] * c->dim,
               c->dim * sizeof(GD_REAL));
}

void GD_OP(gd_cpu_embedding_forward)(gd_pool *pool, GD_REAL *out, const int32_t *tokens,
                                     const GD_REAL *table, size_t n, size_t dim) {
    gd_ops_embedding_ctx c = {out, table, tokens, n, dim, gd_ops_rows_per_task(dim)};
    gd_pool_run(pool, gd_ops_ceil_div(n, c.rows_per_task), gd_ops_embedding_forward_task, &c);
}

/* A task owns a block of columns of the whole table and walks every row in
 * position order: repeated tokens add in a fixed order with no scratch and
 * no two tasks ever touch the same element. */
static void gd_ops_embedding_backward_task(void *arg, size_t task) {
    const gd_ops_embedding_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, GD_COL_BLOCK, c->dim, &lo, &hi);
    for (size_t i = 0; i < c->n; i++) {
        GD_REAL *row = c->out + (size_t)c->tokens[i] * c->dim;
        const GD_REAL *d = c->in + i * c->dim;
        for (size_t j = lo; j < hi; j++)
            row[j] += d[j];
    }
}

void GD_OP(gd_cpu_embedding_backward)(gd_pool *pool, GD_REAL *dtable, const GD_REAL *dout,
                                      const int32_t *tokens, size_t n, size_t dim) {
    if (dtable == NULL)
        return;
    gd_ops_embedding_ctx c = {dtable, dout, tokens, n, dim, 0};
    gd_pool_run(pool, gd_ops_ceil_div(dim, GD_COL_BLOCK), gd_ops_embedding_backward_task, &c);
}

/* --- RMSNorm ------------------------------------------------------------------- */

typedef struct gd_ops_rmsnorm_ctx {
    GD_REAL *out, *rstd, *dinp, *dweight;
    const GD_REAL *inp, *weight, *dout, *saved_rstd;
    size_t n, dim, rows_per_task, row_tasks;
    double eps;
} gd_ops_rmsnorm_ctx;

static void gd_ops_rmsnorm_forward_task(void *arg, size_t task) {
    const gd_ops_rmsnorm_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, c->rows_per_task, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const GD_REAL *x = c->inp + i * c->dim;
        GD_REAL *y = c->out + i * c->dim;
        double sum_sq = 0;
        for (size_t j = 0; j < c->dim; j++)
            sum_sq += (double)x[j] * (double)x[j];
        GD_REAL r = (GD_REAL)(1.0 / sqrt(sum_sq / (double)c->dim + c->eps));
        c->rstd[i] = r;
        /* Hugging Face's order: normalise, then scale by the weight. */
        for (size_t j = 0; j < c->dim; j++)
            y[j] = c->weight[j] * (x[j] * r);
    }
}

void GD_OP(gd_cpu_rmsnorm_forward)(gd_pool *pool, GD_REAL *out, GD_REAL *rstd,
                                   const GD_REAL *inp, const GD_REAL *weight, size_t n,
                                   size_t dim, double eps) {
    gd_ops_rmsnorm_ctx c = {0};
    c.out = out;
    c.rstd = rstd;
    c.inp = inp;
    c.weight = weight;
    c.n = n;
    c.dim = dim;
    c.eps = eps;
    c.rows_per_task = gd_ops_rows_per_task(dim);
    gd_pool_run(pool, gd_ops_ceil_div(n, c.rows_per_task), gd_ops_rmsnorm_forward_task, &c);
}

/* With y_j = w_j x_j r and r = (mean(x^2) + eps)^(-1/2), dr/dx_k = -r^3 x_k / dim:
 *   dx_k = r (w_k g_k - x_k r^2 sum_j(g_j w_j x_j) / dim),   dw_j = sum_i g_ij x_ij r_i.
 * Tasks below row_tasks do rows of dinp; the rest do column blocks of
 * dweight over all rows in row order, summed in double. */
static void gd_ops_rmsnorm_backward_task(void *arg, size_t task) {
    const gd_ops_rmsnorm_ctx *c = arg;
    size_t dim = c->dim;
    if (task < c->row_tasks) {
        size_t lo, hi;
        gd_ops_range(task, c->rows_per_task, c->n, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            const GD_REAL *x = c->inp + i * dim, *g = c->dout + i * dim;
            GD_REAL *dx = c->dinp + i * dim;
            GD_REAL r = c->saved_rstd[i];
            double dot = 0;
            for (size_t j = 0; j < dim; j++)
                dot += (double)g[j] * (double)c->weight[j] * (double)x[j];
            GD_REAL coef = (GD_REAL)((double)r * (double)r * dot / (double)dim);
            for (size_t j = 0; j < dim; j++)
                dx[j] += r * (c->weight[j] * g[j] - x[j] * coef);
        }
        return;
    }
    size_t lo, hi;
    gd_ops_range(task - c->row_tasks, GD_COL_BLOCK, dim, &lo, &hi);
    double acc[GD_COL_BLOCK] = {0};
    for (size_t i = 0; i < c->n; i++) {
        const GD_REAL *x = c->inp + i * dim, *g = c->dout + i * dim;
        double r = (double)c->saved_rstd[i];
        for (size_t j = lo; j < hi; j++)
            acc[j - lo] += (double)g[j] * (double)x[j] * r;
    }
    for (size_t j = lo; j < hi; j++)
        c->dweight[j] += (GD_REAL)acc[j - lo];
}

void GD_OP(gd_cpu_rmsnorm_backward)(gd_pool *pool, GD_REAL *dinp, GD_REAL *dweight,
                                    const GD_REAL *dout, const GD_REAL *inp,
                                    const GD_REAL *weight, const GD_REAL *rstd, size_t n,
                                    size_t dim) {
    gd_ops_rmsnorm_ctx c = {0};
    c.dinp = dinp;
    c.dweight = dweight;
    c.dout = dout;
    c.inp = inp;
    c.weight = weight;
    c.saved_rstd = rstd;
    c.n = n;
    c.dim = dim;
    c.rows_per_task = gd_ops_rows_per_task(dim);
    c.row_tasks = dinp != NULL ? gd_ops_ceil_div(n, c.rows_per_task) : 0;
    size_t col_tasks = dweight != NULL ? gd_ops_ceil_div(dim, GD_COL_BLOCK) : 0;
    gd_pool_run(pool, c.row_tasks + col_tasks, gd_ops_rmsnorm_backward_task, &c);
}

/* --- linear layers ------------------------------------------------------------- */

typedef struct gd_ops_matmul_ctx {
    GD_REAL *out, *dinp, *dweight;
    const GD_REAL *inp, *weight, *dout;
    size_t n, in_dim, out_dim, dinp_tiles;
} gd_ops_matmul_ctx;

static void gd_ops_matmul_forward_task(void *arg, size_t task) {
    const gd_ops_matmul_ctx *c = arg;
    gd_ops_tile t = gd_ops_tile_at(c->n, c->out_dim, task);
    /* out tile = inp rows . weight rows^T */
    GD_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, gd_ops_bi(t.rows), gd_ops_bi(t.cols),
            gd_ops_bi(c->in_dim), 1, c->inp + t.r0 * c->in_dim, gd_ops_ld(c->in_dim),
            c->weight + t.c0 * c->in_dim, gd_ops_ld(c->in_dim), 0,
            c->out + t.r0 * c->out_dim + t.c0, gd_ops_ld(c->out_dim));
}

void GD_OP(gd_cpu_matmul_forward)(gd_pool *pool, GD_REAL *out, const GD_REAL *inp,
                                  const GD_REAL *weight, size_t n, size_t in_dim,
                                  size_t out_dim) {
    gd_cpu_ops_init(); /* a no-op after the first call; CBLAS must not thread */
    gd_ops_matmul_ctx c = {0};
    c.out = out;
    c.inp = inp;
    c.weight = weight;
    c.n = n;
    c.in_dim = in_dim;
    c.out_dim = out_dim;
    gd_pool_run(pool, gd_ops_tile_count(n, out_dim), gd_ops_matmul_forward_task, &c);
}

/* Tasks below dinp_tiles: tiles of dinp (n, in_dim) += dout . weight, K =
 * out_dim. The rest: tiles of dweight (out_dim, in_dim) += dout^T . inp,
 * K = n, so each weight gradient sums all rows inside one GEMM call. */
static void gd_ops_matmul_backward_task(void *arg, size_t task) {
    const gd_ops_matmul_ctx *c = arg;
    if (task < c->dinp_tiles) {
        gd_ops_tile t = gd_ops_tile_at(c->n, c->in_dim, task);
        GD_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, gd_ops_bi(t.rows),
                gd_ops_bi(t.cols), gd_ops_bi(c->out_dim), 1, c->dout + t.r0 * c->out_dim,
                gd_ops_ld(c->out_dim), c->weight + t.c0, gd_ops_ld(c->in_dim), 1,
                c->dinp + t.r0 * c->in_dim + t.c0, gd_ops_ld(c->in_dim));
        return;
    }
    gd_ops_tile t = gd_ops_tile_at(c->out_dim, c->in_dim, task - c->dinp_tiles);
    GD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, gd_ops_bi(t.rows), gd_ops_bi(t.cols),
            gd_ops_bi(c->n), 1, c->dout + t.r0, gd_ops_ld(c->out_dim), c->inp + t.c0,
            gd_ops_ld(c->in_dim), 1, c->dweight + t.r0 * c->in_dim + t.c0,
            gd_ops_ld(c->in_dim));
}

void GD_OP(gd_cpu_matmul_backward)(gd_pool *pool, GD_REAL *dinp, GD_REAL *dweight,
                                   const GD_REAL *dout, const GD_REAL *inp,
                                   const GD_REAL *weight, size_t n, size_t in_dim,
                                   size_t out_dim) {
    gd_cpu_ops_init();
    gd_ops_matmul_ctx c = {0};
    c.dinp = dinp;
    c.dweight = dweight;
    c.dout = dout;
    c.inp = inp;
    c.weight = weight;
    c.n = n;
    c.in_dim = in_dim;
    c.out_dim = out_dim;
    c.dinp_tiles = dinp != NULL ? gd_ops_tile_count(n, in_dim) : 0;
    size_t dweight_tiles = dweight != NULL ? gd_ops_tile_count(out_dim, in_dim) : 0;
    gd_pool_run(pool, c.dinp_tiles + dweight_tiles, gd_ops_matmul_backward_task, &c);
}

/* --- rotary position embedding ------------------------------------------------- */

void GD_OP(gd_cpu_rope_tables)(GD_REAL *cos_table, GD_REAL *sin_table, size_t max_pos,
                               size_t head_dim, double theta) {
    size_t half = head_dim / 2;
    for (size_t i = 0; i < half; i++) {
        double inv_freq = pow(theta, -(double)(2 * i) / (double)head_dim);
        for (size_t p = 0; p < max_pos; p++) {
            double angle = (double)p * inv_freq;
            cos_table[p * half + i] = (GD_REAL)cos(angle);
            sin_table[p * half + i] = (GD_REAL)sin(angle);
        }
    }
}

typedef struct gd_ops_rope_ctx {
    GD_REAL *out;
    const GD_REAL *in, *cos_table, *sin_table;
    size_t rows, seq_len, heads, head_dim, rows_per_task;
} gd_ops_rope_ctx;

/* Both directions share the loop: the backward is the rotation by the
 * negated angle, so it only flips the sign of sin and adds instead of
 * overwriting. Each pair is read before it is written, which is what makes
 * the forward safe in place. */
static void gd_ops_rope_rows(const gd_ops_rope_ctx *c, size_t task, int backward) {
    size_t half = c->head_dim / 2, width = c->heads * c->head_dim;
    size_t lo, hi;
    gd_ops_range(task, c->rows_per_task, c->rows, &lo, &hi);
    for (size_t row = lo; row < hi; row++) {
        size_t pos = row % c->seq_len;
        const GD_REAL *cs = c->cos_table + pos * half, *sn = c->sin_table + pos * half;
        for (size_t h = 0; h < c->heads; h++) {
            const GD_REAL *x = c->in + row * width + h * c->head_dim;
            GD_REAL *y = c->out + row * width + h * c->head_dim;
            for (size_t i = 0; i < half; i++) {
                GD_REAL x1 = x[i], x2 = x[i + half];
                if (backward) {
                    y[i] += x1 * cs[i] + x2 * sn[i];
                    y[i + half] += x2 * cs[i] - x1 * sn[i];
                } else {
                    y[i] = x1 * cs[i] - x2 * sn[i];
                    y[i + half] = x2 * cs[i] + x1 * sn[i];
                }
            }
        }
    }
}

static void gd_ops_rope_forward_task(void *arg, size_t task) {
    gd_ops_rope_rows(arg, task, 0);
}

static void gd_ops_rope_backward_task(void *arg, size_t task) {
    gd_ops_rope_rows(arg, task, 1);
}

void GD_OP(gd_cpu_rope_forward)(gd_pool *pool, GD_REAL *out, const GD_REAL *inp,
                                const GD_REAL *cos_table, const GD_REAL *sin_table,
                                size_t batch, size_t seq_len, size_t heads, size_t head_dim) {
    gd_ops_rope_ctx c = {out, inp, cos_table, sin_table, batch * seq_len, seq_len,
                         heads, head_dim, gd_ops_rows_per_task(heads * head_dim)};
    gd_pool_run(pool, gd_ops_ceil_div(c.rows, c.rows_per_task), gd_ops_rope_forward_task, &c);
}

void GD_OP(gd_cpu_rope_backward)(gd_pool *pool, GD_REAL *dinp, const GD_REAL *dout,
                                 const GD_REAL *cos_table, const GD_REAL *sin_table,
                                 size_t batch, size_t seq_len, size_t heads, size_t head_dim) {
    if (dinp == NULL)
        return;
    gd_ops_rope_ctx c = {dinp, dout, cos_table, sin_table, batch * seq_len, seq_len,
                         heads, head_dim, gd_ops_rows_per_task(heads * head_dim)};
    gd_pool_run(pool, gd_ops_ceil_div(c.rows, c.rows_per_task), gd_ops_rope_backward_task, &c);
}

/* --- causal self-attention ----------------------------------------------------- */

typedef struct gd_ops_attention_ctx {
    GD_REAL *out, *att, *dq, *dk, *dv, *scratch;
    const GD_REAL *q, *k, *v, *dout, *saved_att;
    size_t seq_len, heads, kv_heads, head_dim;
    GD_REAL scale;
} gd_ops_attention_ctx;

/* Row t of a T x T block holds the scores of query t against every key; only
 * keys 0..t are visible. Max subtraction keeps exp in range; the
 * denominator is summed in double. Masked entries become exact zeros, so
 * the following full-width GEMMs ignore them. */
static void gd_ops_causal_softmax(GD_REAL *a, size_t seq_len) {
    for (size_t t = 0; t < seq_len; t++) {
        GD_REAL *row = a + t * seq_len;
        GD_REAL max = row[0];
        for (size_t j = 1; j <= t; j++)
            max = row[j] > max ? row[j] : max;
        double sum = 0;
        for (size_t j = 0; j <= t; j++) {
            row[j] = GD_EXP(row[j] - max);
            sum += (double)row[j];
        }
        double inv = 1.0 / sum;
        for (size_t j = 0; j <= t; j++)
            row[j] = (GD_REAL)((double)row[j] * inv);
        for (size_t j = t + 1; j < seq_len; j++)
            row[j] = 0;
    }
}

/* One task per (batch, query head). */
static void gd_ops_attention_forward_task(void *arg, size_t task) {
    const gd_ops_attention_ctx *c = arg;
    size_t T = c->seq_len, hd = c->head_dim;
    size_t b = task / c->heads, h = task % c->heads, kvh = h / (c->heads / c->kv_heads);
    size_t q_stride = c->heads * hd, kv_stride = c->kv_heads * hd;
    const GD_REAL *q = c->q + b * T * q_stride + h * hd;
    const GD_REAL *k = c->k + b * T * kv_stride + kvh * hd;
    const GD_REAL *v = c->v + b * T * kv_stride + kvh * hd;
    GD_REAL *att = c->att + task * T * T;
    GD_REAL *out = c->out + b * T * q_stride + h * hd;
    blasint hd_ = gd_ops_bi(hd), ld_t = gd_ops_ld(T);
    /* Query rows in blocks: block [r0, r1) sees keys [0, r1) only, so the
     * GEMMs skip the masked upper triangle beyond the block (the softmax
     * zeroes what is masked inside it). */
    for (size_t r0 = 0; r0 < T; r0 += GD_ATT_BLOCK) {
        size_t r1 = r0 + GD_ATT_BLOCK < T ? r0 + GD_ATT_BLOCK : T;
        blasint rows = gd_ops_bi(r1 - r0), keys = gd_ops_bi(r1);
        GD_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hd_, c->scale,
                q + r0 * q_stride, gd_ops_ld(q_stride), k, gd_ops_ld(kv_stride), 0,
                att + r0 * T, ld_t);
    }
    gd_ops_causal_softmax(att, T);
    for (size_t r0 = 0; r0 < T; r0 += GD_ATT_BLOCK) {
        size_t r1 = r0 + GD_ATT_BLOCK < T ? r0 + GD_ATT_BLOCK : T;
        blasint rows = gd_ops_bi(r1 - r0), keys = gd_ops_bi(r1);
        GD_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hd_, keys, 1, att + r0 * T,
                ld_t, v, gd_ops_ld(kv_stride), 0, out + r0 * q_stride, gd_ops_ld(q_stride));
    }
}

void GD_OP(gd_cpu_attention_forward)(gd_pool *pool, GD_REAL *out, GD_REAL *att,
                                     const GD_REAL *q, const GD_REAL *k, const GD_REAL *v,
                                     size_t batch, size_t seq_len, size_t heads,
                                     size_t kv_heads, size_t head_dim) {
    gd_cpu_ops_init();
    gd_ops_attention_ctx c = {0};
    c.out = out;
    c.att = att;
    c.q = q;
    c.k = k;
    c.v = v;
    c.seq_len = seq_len;
    c.heads = heads;
    c.kv_heads = kv_heads;
    c.head_dim = head_dim;
    c.scale = (GD_REAL)(1.0 / sqrt((double)head_dim));
    gd_pool_run(pool, batch * heads, gd_ops_attention_forward_task, &c);
}

/* One task per (batch, key/value head): it runs that head's query heads in
 * head order, each in query-row blocks in order, and is the only writer of
 * its slices of dk and dv, so their sums have a fixed order without scratch
 * for partial sums. Per query head, with P = att, dO = dout,
 * S = scale * q k^T, for query rows [r0, r1) and keys [0, r1):
 *   dV += P^T dO,   dP = dO V^T,   dS = P * (dP - rowsum(P * dP)),
 *   dQ += scale dS K,   dK += scale dS^T Q. */
static void gd_ops_attention_backward_task(void *arg, size_t task) {
    const gd_ops_attention_ctx *c = arg;
    size_t T = c->seq_len, hd = c->head_dim, group = c->heads / c->kv_heads;
    size_t b = task / c->kv_heads, kvh = task % c->kv_heads;
    size_t q_stride = c->heads * hd, kv_stride = c->kv_heads * hd;
    const GD_REAL *k = c->k + b * T * kv_stride + kvh * hd;
    const GD_REAL *v = c->v + b * T * kv_stride + kvh * hd;
    GD_REAL *dk = c->dk != NULL ? c->dk + b * T * kv_stride + kvh * hd : NULL;
    GD_REAL *dv = c->dv != NULL ? c->dv + b * T * kv_stride + kvh * hd : NULL;
    blasint hd_ = gd_ops_bi(hd);
    blasint ld_t = gd_ops_ld(T), ld_q = gd_ops_ld(q_stride), ld_kv = gd_ops_ld(kv_stride);
    for (size_t h = kvh * group; h < (kvh + 1) * group; h++) {
        const GD_REAL *att = c->saved_att + (b * c->heads + h) * T * T;
        GD_REAL *ds = c->scratch + (b * c->heads + h) * T * T;
        const GD_REAL *dout = c->dout + b * T * q_stride + h * hd;
        const GD_REAL *q = c->q + b * T * q_stride + h * hd;
        GD_REAL *dq = c->dq != NULL ? c->dq + b * T * q_stride + h * hd : NULL;
        for (size_t r0 = 0; r0 < T; r0 += GD_ATT_BLOCK) {
            size_t r1 = r0 + GD_ATT_BLOCK < T ? r0 + GD_ATT_BLOCK : T;
            blasint rows = gd_ops_bi(r1 - r0), keys = gd_ops_bi(r1);
            const GD_REAL *p_blk = att + r0 * T;
            GD_REAL *ds_blk = ds + r0 * T;
            if (dv != NULL)
                GD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, keys, hd_, rows, 1, p_blk,
                        ld_t, dout + r0 * q_stride, ld_q, 1, dv, ld_kv);
            if (dq == NULL && dk == NULL)
                continue;
            GD_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hd_, 1,
                    dout + r0 * q_stride, ld_q, v, ld_kv, 0, ds_blk, ld_t);
            /* softmax backward, row by row; masked entries become exact zeros */
            for (size_t t = r0; t < r1; t++) {
                const GD_REAL *p = att + t * T;
                GD_REAL *d = ds + t * T;
                double dot = 0;
                for (size_t j = 0; j <= t; j++)
                    dot += (double)p[j] * (double)d[j];
                GD_REAL dot_r = (GD_REAL)dot;
                for (size_t j = 0; j <= t; j++)
                    d[j] = p[j] * (d[j] - dot_r);
                for (size_t j = t + 1; j < r1; j++)
                    d[j] = 0;
            }
            if (dq != NULL)
                GD_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hd_, keys, c->scale,
                        ds_blk, ld_t, k, ld_kv, 1, dq + r0 * q_stride, ld_q);
            if (dk != NULL)
                GD_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, keys, hd_, rows, c->scale,
                        ds_blk, ld_t, q + r0 * q_stride, ld_q, 1, dk, ld_kv);
        }
    }
}

void GD_OP(gd_cpu_attention_backward)(gd_pool *pool, GD_REAL *dq, GD_REAL *dk, GD_REAL *dv,
                                      GD_REAL *scratch, const GD_REAL *dout,
                                      const GD_REAL *att, const GD_REAL *q, const GD_REAL *k,
                                      const GD_REAL *v, size_t batch, size_t seq_len,
                                      size_t heads, size_t kv_heads, size_t head_dim) {
    gd_cpu_ops_init();
    gd_ops_attention_ctx c = {0};
    c.dq = dq;
    c.dk = dk;
    c.dv = dv;
    c.scratch = scratch;
    c.dout = dout;
    c.saved_att = att;
    c.q = q;
    c.k = k;
    c.v = v;
    c.seq_len = seq_len;
    c.heads = heads;
    c.kv_heads = kv_heads;
    c.head_dim = head_dim;
    c.scale = (GD_REAL)(1.0 / sqrt((double)head_dim));
    gd_pool_run(pool, batch * kv_heads, gd_ops_attention_backward_task, &c);
}

/* --- SwiGLU -------------------------------------------------------------------- */

/* 1 / (1 + exp(-x)), evaluated so that exp only ever sees a non-positive
 * argument: no overflow to inf for large |x|, the limits are exact (0 and
 * 1), and sigmoid(x) for x < 0 keeps its relative precision (e / (1 + e),
 * not 1 - 1 / (1 + e)). silu(x) = x sigmoid(x) is the documented
 * x / (1 + exp(-x)). */
static inline GD_REAL gd_ops_sigmoid(GD_REAL x) {
    GD_REAL e = GD_EXP(x >= 0 ? -x : x);
    GD_REAL num = x >= 0 ? (GD_REAL)1 : e;
    return num / (1 + e);
}

typedef struct gd_ops_elementwise_ctx {
    GD_REAL *out, *out2, *m, *v;
    const GD_REAL *a, *b, *c;
    size_t n;
} gd_ops_elementwise_ctx;

static void gd_ops_swiglu_forward_task(void *arg, size_t task) {
    const gd_ops_elementwise_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, GD_TASK_ELEMS, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        GD_REAL g = c->a[i];
        c->out[i] = g * gd_ops_sigmoid(g) * c->b[i];
    }
}

void GD_OP(gd_cpu_swiglu_forward)(gd_pool *pool, GD_REAL *out, const GD_REAL *gate,
                                  const GD_REAL *up, size_t n) {
    gd_ops_elementwise_ctx c = {0};
    c.out = out;
    c.a = gate;
    c.b = up;
    c.n = n;
    gd_pool_run(pool, gd_ops_ceil_div(n, GD_TASK_ELEMS), gd_ops_swiglu_forward_task, &c);
}

/* silu'(x) = s (1 + x (1 - s)) with s = sigmoid(x). */
static void gd_ops_swiglu_backward_task(void *arg, size_t task) {
    const gd_ops_elementwise_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, GD_TASK_ELEMS, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        GD_REAL g = c->b[i], s = gd_ops_sigmoid(g), d = c->a[i];
        if (c->out != NULL)
            c->out[i] += d * c->c[i] * (s * (1 + g * (1 - s)));
        if (c->out2 != NULL)
            c->out2[i] += d * (g * s);
    }
}

void GD_OP(gd_cpu_swiglu_backward)(gd_pool *pool, GD_REAL *dgate, GD_REAL *dup,
                                   const GD_REAL *dout, const GD_REAL *gate, const GD_REAL *up,
                                   size_t n) {
    if (dgate == NULL && dup == NULL)
        return;
    gd_ops_elementwise_ctx c = {0};
    c.out = dgate;
    c.out2 = dup;
    c.a = dout;
    c.b = gate;
    c.c = up;
    c.n = n;
    gd_pool_run(pool, gd_ops_ceil_div(n, GD_TASK_ELEMS), gd_ops_swiglu_backward_task, &c);
}

/* --- elementwise --------------------------------------------------------------- */

static void gd_ops_add_task(void *arg, size_t task) {
    const gd_ops_elementwise_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, GD_TASK_ELEMS, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        c->out[i] = c->a[i] + c->b[i];
}

void GD_OP(gd_cpu_add)(gd_pool *pool, GD_REAL *out, const GD_REAL *a, const GD_REAL *b,
                       size_t n) {
    gd_ops_elementwise_ctx c = {0};
    c.out = out;
    c.a = a;
    c.b = b;
    c.n = n;
    gd_pool_run(pool, gd_ops_ceil_div(n, GD_TASK_ELEMS), gd_ops_add_task, &c);
}

void GD_OP(gd_cpu_accumulate)(gd_pool *pool, GD_REAL *dst, const GD_REAL *src, size_t n) {
    GD_OP(gd_cpu_add)(pool, dst, dst, src, n);
}

typedef struct gd_ops_scale_ctx {
    GD_REAL *x;
    GD_REAL s;
    size_t n;
} gd_ops_scale_ctx;

static void gd_ops_scale_task(void *arg, size_t task) {
    const gd_ops_scale_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, GD_TASK_ELEMS, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        c->x[i] *= c->s;
}

void GD_OP(gd_cpu_scale)(gd_pool *pool, GD_REAL *x, double s, size_t n) {
    gd_ops_scale_ctx c = {x, (GD_REAL)s, n};
    gd_pool_run(pool, gd_ops_ceil_div(n, GD_TASK_ELEMS), gd_ops_scale_task, &c);
}

typedef struct gd_ops_sum_squares_ctx {
    const GD_REAL *x;
    size_t n, first_chunk;
    double partial[GD_SUMSQ_ROUND];
} gd_ops_sum_squares_ctx;

static void gd_ops_sum_squares_task(void *arg, size_t task) {
    gd_ops_sum_squares_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(c->first_chunk + task, GD_SUMSQ_CHUNK, c->n, &lo, &hi);
    double sum = 0;
    for (size_t i = lo; i < hi; i++)
        sum += (double)c->x[i] * (double)c->x[i];
    c->partial[task] = sum;
}

double GD_OP(gd_cpu_sum_squares)(gd_pool *pool, const GD_REAL *x, size_t n) {
    gd_ops_sum_squares_ctx c;
    c.x = x;
    c.n = n;
    size_t chunks = gd_ops_ceil_div(n, GD_SUMSQ_CHUNK);
    double total = 0;
    for (c.first_chunk = 0; c.first_chunk < chunks; c.first_chunk += GD_SUMSQ_ROUND) {
        size_t round = gd_ops_min(GD_SUMSQ_ROUND, chunks - c.first_chunk);
        gd_pool_run(pool, round, gd_ops_sum_squares_task, &c);
        for (size_t i = 0; i < round; i++)
            total += c.partial[i];
    }
    return total;
}

/* --- loss ---------------------------------------------------------------------- */

typedef struct gd_ops_cross_entropy_ctx {
    GD_REAL *out; /* forward: losses; backward: dlogits */
    const GD_REAL *logits;
    const int32_t *targets;
    size_t n, vocab, rows_per_task;
    GD_REAL dloss;
} gd_ops_cross_entropy_ctx;

/* The row's maximum and sum(exp(x - max)) in double: logsumexp = max + log(sum)
 * without overflow whatever the logits' magnitude. */
static GD_REAL gd_ops_row_max_sumexp(const GD_REAL *x, size_t vocab, double *sum) {
    GD_REAL max = x[0];
    for (size_t j = 1; j < vocab; j++)
        max = x[j] > max ? x[j] : max;
    double s = 0;
    for (size_t j = 0; j < vocab; j++)
        s += (double)GD_EXP(x[j] - max);
    *sum = s;
    return max;
}

static void gd_ops_cross_entropy_forward_task(void *arg, size_t task) {
    const gd_ops_cross_entropy_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, c->rows_per_task, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const GD_REAL *x = c->logits + i * c->vocab;
        double sum;
        GD_REAL max = gd_ops_row_max_sumexp(x, c->vocab, &sum);
        c->out[i] = (GD_REAL)((double)max + log(sum) - (double)x[c->targets[i]]);
    }
}

void GD_OP(gd_cpu_cross_entropy_forward)(gd_pool *pool, GD_REAL *losses, const GD_REAL *logits,
                                         const int32_t *targets, size_t n, size_t vocab) {
    gd_ops_cross_entropy_ctx c = {losses, logits, targets, n, vocab,
                                  gd_ops_rows_per_task(vocab), 0};
    gd_pool_run(pool, gd_ops_ceil_div(n, c.rows_per_task), gd_ops_cross_entropy_forward_task,
                &c);
}

/* Element j of the row is read only before element j of the output is
 * written, so dlogits may be logits. */
static void gd_ops_cross_entropy_backward_task(void *arg, size_t task) {
    const gd_ops_cross_entropy_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, c->rows_per_task, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const GD_REAL *x = c->logits + i * c->vocab;
        GD_REAL *dx = c->out + i * c->vocab;
        double sum;
        GD_REAL max = gd_ops_row_max_sumexp(x, c->vocab, &sum);
        double inv = 1.0 / sum, dloss = (double)c->dloss;
        size_t target = (size_t)c->targets[i];
        for (size_t j = 0; j < c->vocab; j++) {
            double p = (double)GD_EXP(x[j] - max) * inv;
            dx[j] = (GD_REAL)((p - (j == target ? 1.0 : 0.0)) * dloss);
        }
    }
}

void GD_OP(gd_cpu_cross_entropy_backward)(gd_pool *pool, GD_REAL *dlogits,
                                          const GD_REAL *logits, const int32_t *targets,
                                          double dloss, size_t n, size_t vocab) {
    gd_ops_cross_entropy_ctx c = {dlogits, logits, targets, n, vocab,
                                  gd_ops_rows_per_task(vocab), (GD_REAL)dloss};
    gd_pool_run(pool, gd_ops_ceil_div(n, c.rows_per_task), gd_ops_cross_entropy_backward_task,
                &c);
}

/* --- optimizer ----------------------------------------------------------------- */

/* The step's scalars, each derived in double from the arguments and rounded
 * to GD_REAL once, as PyTorch does with its Python-float hyperparameters. */
typedef struct gd_ops_adamw_ctx {
    GD_REAL *param, *m, *v;
    const GD_REAL *grad;
    size_t n;
    GD_REAL grad_scale, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size,
        bc2_sqrt, eps;
} gd_ops_adamw_ctx;

static void gd_ops_adamw_task(void *arg, size_t task) {
    const gd_ops_adamw_ctx *c = arg;
    size_t lo, hi;
    gd_ops_range(task, GD_TASK_ELEMS, c->n, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        GD_REAL g = c->grad[i] * c->grad_scale;
        GD_REAL p = c->param[i] * c->decay;
        GD_REAL m = c->beta1 * c->m[i] + c->one_minus_beta1 * g;
        GD_REAL v = c->beta2 * c->v[i] + c->one_minus_beta2 * g * g;
        c->m[i] = m;
        c->v[i] = v;
        c->param[i] = p - c->step_size * m / (GD_SQRT(v) / c->bc2_sqrt + c->eps);
    }
}

void GD_OP(gd_cpu_adamw)(gd_pool *pool, GD_REAL *param, const GD_REAL *grad, GD_REAL *m,
                         GD_REAL *v, size_t n, double lr, double beta1, double beta2,
                         double eps, double weight_decay, double bc1, double bc2,
                         double grad_scale) {
    gd_ops_adamw_ctx c;
    c.param = param;
    c.m = m;
    c.v = v;
    c.grad = grad;
    c.n = n;
    c.grad_scale = (GD_REAL)grad_scale;
    c.decay = (GD_REAL)(1.0 - lr * weight_decay);
    c.beta1 = (GD_REAL)beta1;
    c.one_minus_beta1 = (GD_REAL)(1.0 - beta1);
    c.beta2 = (GD_REAL)beta2;
    c.one_minus_beta2 = (GD_REAL)(1.0 - beta2);
    c.step_size = (GD_REAL)(lr / bc1);
    c.bc2_sqrt = (GD_REAL)sqrt(bc2);
    c.eps = (GD_REAL)eps;
    gd_pool_run(pool, gd_ops_ceil_div(n, GD_TASK_ELEMS), gd_ops_adamw_task, &c);
}
