/* The CPU reference ops (kernels/cpu/ops.h): finite-difference gradient
 * checks of every backward in double, forwards against naive loops, float
 * against double, flash attention against the naive one, bitwise determinism across thread counts, AdamW against
 * hand-computed values, and the in-place and stability promises. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "common/rng.h"
#include "kernels/cpu/ops_f64.h"
#include "tests/support/testkit.h"

/* Fails when err is above tol (or NaN), printing both. */
#define CHECK_ERR(err, tol, what)                                                          \
    do {                                                                                   \
        double gd_err_ = (err);                                                            \
        if (!(gd_err_ <= (tol))) {                                                         \
            fprintf(stderr, "%s:%d: %s: error %.3g above %.3g\n", __FILE__, __LINE__, what, \
                    gd_err_, (double)(tol));                                               \
            gd_test_failures++;                                                            \
        }                                                                                  \
    } while (0)

/* --- helpers ----------------------------------------------------------------------- */

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n > 0 ? n : 1, size);
    if (p == NULL)
        abort();
    return p;
}

static double *dalloc(size_t n) {
    return xcalloc(n, sizeof(double));
}

static float *falloc(size_t n) {
    return xcalloc(n, sizeof(float));
}

static gd_rng test_rng(uint32_t id) {
    gd_rng rng;
    uint32_t ids[4] = {id, 0, 0, 0};
    gd_rng_init(&rng, 20240601, ids);
    return rng;
}

/* Normal draws times scale, rounded to float so that the float and double
 * paths can be fed exactly the same values. */
static double *random_normal(gd_rng *rng, size_t n, double scale) {
    double *x = dalloc(n);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(float)(gd_rng_normal12(rng) * scale);
    return x;
}

static int32_t *random_tokens(gd_rng *rng, size_t n, size_t vocab) {
    int32_t *t = xcalloc(n, sizeof *t);
    for (size_t i = 0; i < n; i++)
        t[i] = (int32_t)gd_rng_below(rng, vocab);
    return t;
}

static float *to_f32(const double *x, size_t n) {
    float *y = falloc(n);
    for (size_t i = 0; i < n; i++)
        y[i] = (float)x[i];
    return y;
}

static double *copy_f64(const double *x, size_t n) {
    double *y = dalloc(n);
    memcpy(y, x, n * sizeof *y);
    return y;
}

static void fill(double *x, size_t n, double value) {
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* max |a - b| / max |b|: an error relative to the reference's scale, so
 * near-zero elements of a well-scaled result do not dominate. */
static double rel_err(const double *a, const double *b, size_t n) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return diff / fmax(scale, 1e-300);
}

static double rel_err_f32(const float *a, const double *b, size_t n) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs((double)a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return diff / fmax(scale, 1e-300);
}

/* --- finite differences ------------------------------------------------------------ */

/* Step and tolerance of the gradient checks, all in double. With h = 1e-5
 * the central difference's truncation error is about h^2/6 |f'''| ~ 1e-11
 * and its rounding error about 1e-16 |L| / h ~ 1e-10 for the O(1)-sized
 * losses used here, so a correct gradient agrees to ~1e-10 of the
 * gradient's scale; 1e-7 leaves a thousandfold margin, while a wrong or
 * missing term errs by O(1). */
#define FD_STEP 1e-5
#define FD_TOL 1e-7

/* What the "adds into" checks pre-fill gradients with. */
#define PREFILL 0.25

typedef double (*loss_fn)(void *ctx);

/* max |numeric - analytic| / max |numeric| over every element of x, which
 * loss(ctx) reads. x is restored. */
static double fd_error(loss_fn loss, void *ctx, double *x, size_t n, const double *analytic) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double saved = x[i], up = saved + FD_STEP, down = saved - FD_STEP;
        x[i] = up;
        double l_up = loss(ctx);
        x[i] = down;
        double l_down = loss(ctx);
        x[i] = saved;
        double numeric = (l_up - l_down) / (up - down);
        diff = fmax(diff, fabs(numeric - analytic[i]));
        scale = fmax(scale, fabs(numeric));
    }
    return diff / fmax(scale, 1e-300);
}

/* A backward run into a buffer pre-filled with PREFILL must give PREFILL
 * plus the gradient it gives from zero. */
static void check_adds_into(const double *prefilled, const double *from_zero, size_t n) {
    double err = 0;
    for (size_t i = 0; i < n; i++)
        err = fmax(err, fabs(prefilled[i] - PREFILL - from_zero[i]) / (1 + fabs(from_zero[i])));
    CHECK_ERR(err, 1e-15, "adds into");
}

/* --- gradient checks (double) ------------------------------------------------------ */

typedef struct embedding_case {
    size_t n, dim, vocab;
    int32_t *tokens;
    double *table, *out, *r;
} embedding_case;

static double embedding_loss(void *arg) {
    embedding_case *c = arg;
    gd_cpu_embedding_forward_f64(NULL, c->out, c->tokens, c->table, c->n, c->dim);
    return dot(c->out, c->r, c->n * c->dim);
}

static void test_grad_embedding(void) {
    gd_rng rng = test_rng(1);
    embedding_case c = {.n = 12, .dim = 5, .vocab = 7}; /* 12 tokens of 7: repeats */
    size_t nd = c.n * c.dim, vd = c.vocab * c.dim;
    c.tokens = random_tokens(&rng, c.n, c.vocab);
    c.table = random_normal(&rng, vd, 1);
    c.out = dalloc(nd);
    c.r = random_normal(&rng, nd, 1);
    double *dtable = dalloc(vd), *pre = dalloc(vd);
    gd_cpu_embedding_backward_f64(NULL, dtable, c.r, c.tokens, c.n, c.dim);
    CHECK_ERR(fd_error(embedding_loss, &c, c.table, vd, dtable), FD_TOL, "embedding dtable");
    fill(pre, vd, PREFILL);
    gd_cpu_embedding_backward_f64(NULL, pre, c.r, c.tokens, c.n, c.dim);
    check_adds_into(pre, dtable, vd);
    free(c.tokens), free(c.table), free(c.out), free(c.r), free(dtable), free(pre);
}

typedef struct rmsnorm_case {
    size_t n, dim;
    double *inp, *weight, *out, *rstd, *r;
} rmsnorm_case;

static double rmsnorm_loss(void *arg) {
    rmsnorm_case *c = arg;
    gd_cpu_rmsnorm_forward_f64(NULL, c->out, c->rstd, c->inp, c->weight, c->n, c->dim, 1e-5);
    return dot(c->out, c->r, c->n * c->dim);
}

static void test_grad_rmsnorm(void) {
    gd_rng rng = test_rng(2);
    rmsnorm_case c = {.n = 6, .dim = 9};
    size_t nd = c.n * c.dim;
    c.inp = random_normal(&rng, nd, 1);
    c.weight = random_normal(&rng, c.dim, 0.3);
    for (size_t j = 0; j < c.dim; j++)
        c.weight[j] += 1;
    c.out = dalloc(nd);
    c.rstd = dalloc(c.n);
    c.r = random_normal(&rng, nd, 1);
    double *dinp = dalloc(nd), *dweight = dalloc(c.dim);
    rmsnorm_loss(&c); /* rstd at the unperturbed point */
    double *rstd = copy_f64(c.rstd, c.n);
    gd_cpu_rmsnorm_backward_f64(NULL, dinp, dweight, c.r, c.inp, c.weight, rstd, c.n, c.dim);
    CHECK_ERR(fd_error(rmsnorm_loss, &c, c.inp, nd, dinp), FD_TOL, "rmsnorm dinp");
    CHECK_ERR(fd_error(rmsnorm_loss, &c, c.weight, c.dim, dweight), FD_TOL, "rmsnorm dweight");
    double *pre_inp = dalloc(nd), *pre_weight = dalloc(c.dim);
    fill(pre_inp, nd, PREFILL);
    fill(pre_weight, c.dim, PREFILL);
    gd_cpu_rmsnorm_backward_f64(NULL, pre_inp, pre_weight, c.r, c.inp, c.weight, rstd, c.n,
                                c.dim);
    check_adds_into(pre_inp, dinp, nd);
    check_adds_into(pre_weight, dweight, c.dim);
    free(c.inp), free(c.weight), free(c.out), free(c.rstd), free(c.r), free(dinp);
    free(dweight), free(rstd), free(pre_inp), free(pre_weight);
}

typedef struct matmul_case {
    size_t n, in_dim, out_dim;
    double *inp, *weight, *out, *r;
} matmul_case;

static double matmul_loss(void *arg) {
    matmul_case *c = arg;
    gd_cpu_matmul_forward_f64(NULL, c->out, c->inp, c->weight, c->n, c->in_dim, c->out_dim);
    return dot(c->out, c->r, c->n * c->out_dim);
}

static void test_grad_matmul(void) {
    gd_rng rng = test_rng(3);
    matmul_case c = {.n = 5, .in_dim = 7, .out_dim = 6};
    size_t ni = c.n * c.in_dim, no = c.n * c.out_dim, oi = c.out_dim * c.in_dim;
    c.inp = random_normal(&rng, ni, 1);
    c.weight = random_normal(&rng, oi, 1);
    c.out = dalloc(no);
    c.r = random_normal(&rng, no, 1);
    double *dinp = dalloc(ni), *dweight = dalloc(oi);
    gd_cpu_matmul_backward_f64(NULL, dinp, dweight, c.r, c.inp, c.weight, c.n, c.in_dim,
                               c.out_dim);
    CHECK_ERR(fd_error(matmul_loss, &c, c.inp, ni, dinp), FD_TOL, "matmul dinp");
    CHECK_ERR(fd_error(matmul_loss, &c, c.weight, oi, dweight), FD_TOL, "matmul dweight");
    double *pre_inp = dalloc(ni), *pre_weight = dalloc(oi);
    fill(pre_inp, ni, PREFILL);
    fill(pre_weight, oi, PREFILL);
    gd_cpu_matmul_backward_f64(NULL, pre_inp, pre_weight, c.r, c.inp, c.weight, c.n, c.in_dim,
                               c.out_dim);
    check_adds_into(pre_inp, dinp, ni);
    check_adds_into(pre_weight, dweight, oi);
    /* A NULL gradient is skipped and leaves the other one alone. */
    double *only_inp = dalloc(ni);
    gd_cpu_matmul_backward_f64(NULL, only_inp, NULL, c.r, c.inp, c.weight, c.n, c.in_dim,
                               c.out_dim);
    CHECK(memcmp(only_inp, dinp, ni * sizeof(double)) == 0);
    free(c.inp), free(c.weight), free(c.out), free(c.r), free(dinp), free(dweight);
    free(pre_inp), free(pre_weight), free(only_inp);
}

typedef struct rope_case {
    size_t batch, seq_len, heads, head_dim;
    double *inp, *out, *cos_table, *sin_table, *r;
} rope_case;

static double rope_loss(void *arg) {
    rope_case *c = arg;
    gd_cpu_rope_forward_f64(NULL, c->out, c->inp, c->cos_table, c->sin_table, c->batch,
                            c->seq_len, c->heads, c->head_dim);
    return dot(c->out, c->r, c->batch * c->seq_len * c->heads * c->head_dim);
}

static void test_grad_rope(void) {
    gd_rng rng = test_rng(4);
    rope_case c = {.batch = 2, .seq_len = 5, .heads = 3, .head_dim = 8};
    size_t n = c.batch * c.seq_len * c.heads * c.head_dim, table = 7 * c.head_dim / 2;
    c.inp = random_normal(&rng, n, 1);
    c.out = dalloc(n);
    c.r = random_normal(&rng, n, 1);
    c.cos_table = dalloc(table);
    c.sin_table = dalloc(table);
    gd_cpu_rope_tables_f64(c.cos_table, c.sin_table, 7, c.head_dim, 100.0);
    double *dinp = dalloc(n), *pre = dalloc(n);
    gd_cpu_rope_backward_f64(NULL, dinp, c.r, c.cos_table, c.sin_table, c.batch, c.seq_len,
                             c.heads, c.head_dim);
    CHECK_ERR(fd_error(rope_loss, &c, c.inp, n, dinp), FD_TOL, "rope dinp");
    fill(pre, n, PREFILL);
    gd_cpu_rope_backward_f64(NULL, pre, c.r, c.cos_table, c.sin_table, c.batch, c.seq_len,
                             c.heads, c.head_dim);
    check_adds_into(pre, dinp, n);
    free(c.inp), free(c.out), free(c.r), free(c.cos_table), free(c.sin_table), free(dinp);
    free(pre);
}

typedef struct attention_case {
    size_t batch, seq_len, heads, kv_heads, head_dim;
    double *q, *k, *v, *out, *att, *r;
} attention_case;

static double attention_loss(void *arg) {
    attention_case *c = arg;
    gd_cpu_attention_forward_f64(NULL, c->out, c->att, c->q, c->k, c->v, c->batch, c->seq_len,
                                 c->heads, c->kv_heads, c->head_dim);
    return dot(c->out, c->r, c->batch * c->seq_len * c->heads * c->head_dim);
}

/* A case of head_dim 4 with random q, k, v and loss weights r, and
 * `saved` values for what the forward keeps; *nq and *nkv receive the
 * sizes of q and of k (v). */
static attention_case attention_case_new(uint32_t seed, size_t batch, size_t seq_len,
                                         size_t heads, size_t kv_heads, size_t saved, size_t *nq,
                                         size_t *nkv) {
    gd_rng rng = test_rng(seed + (uint32_t)(heads * 16 + kv_heads + seq_len));
    attention_case c = {.batch = batch, .seq_len = seq_len, .heads = heads,
                        .kv_heads = kv_heads, .head_dim = 4};
    *nq = c.batch * c.seq_len * heads * c.head_dim;
    *nkv = c.batch * c.seq_len * kv_heads * c.head_dim;
    c.q = random_normal(&rng, *nq, 1);
    c.k = random_normal(&rng, *nkv, 1);
    c.v = random_normal(&rng, *nkv, 1);
    c.out = dalloc(*nq);
    c.att = dalloc(saved);
    c.r = random_normal(&rng, *nq, 1);
    return c;
}

static void grad_attention_case(size_t batch, size_t seq_len, size_t heads, size_t kv_heads) {
    size_t nq, nkv, natt = batch * heads * seq_len * seq_len;
    attention_case c = attention_case_new(5, batch, seq_len, heads, kv_heads, natt, &nq, &nkv);
    attention_loss(&c);
    double *att = copy_f64(c.att, natt), *scratch = dalloc(natt);
    double *dq = dalloc(nq), *dk = dalloc(nkv), *dv = dalloc(nkv);
    gd_cpu_attention_backward_f64(NULL, dq, dk, dv, scratch, c.r, att, c.q, c.k, c.v, c.batch,
                                  c.seq_len, heads, kv_heads, c.head_dim);
    char what[64];
    snprintf(what, sizeof what, "attention %zu/%zu dq", heads, kv_heads);
    CHECK_ERR(fd_error(attention_loss, &c, c.q, nq, dq), FD_TOL, what);
    snprintf(what, sizeof what, "attention %zu/%zu dk", heads, kv_heads);
    CHECK_ERR(fd_error(attention_loss, &c, c.k, nkv, dk), FD_TOL, what);
    snprintf(what, sizeof what, "attention %zu/%zu dv", heads, kv_heads);
    CHECK_ERR(fd_error(attention_loss, &c, c.v, nkv, dv), FD_TOL, what);
    double *pq = dalloc(nq), *pk = dalloc(nkv), *pv = dalloc(nkv);
    fill(pq, nq, PREFILL);
    fill(pk, nkv, PREFILL);
    fill(pv, nkv, PREFILL);
    gd_cpu_attention_backward_f64(NULL, pq, pk, pv, scratch, c.r, att, c.q, c.k, c.v, c.batch,
                                  c.seq_len, heads, kv_heads, c.head_dim);
    check_adds_into(pq, dq, nq);
    check_adds_into(pk, dk, nkv);
    check_adds_into(pv, dv, nkv);
    free(c.q), free(c.k), free(c.v), free(c.out), free(c.att), free(c.r), free(att);
    free(scratch), free(dq), free(dk), free(dv), free(pq), free(pk), free(pv);
}

static void test_grad_attention(void) {
    grad_attention_case(2, 5, 4, 2); /* grouped-query */
    grad_attention_case(2, 5, 3, 3); /* plain multi-head */
    grad_attention_case(2, 5, 4, 1); /* multi-query */
    grad_attention_case(1, 70, 2, 1); /* query-row blocks of 64: a full one and a partial one */
}

/* Flash attention (the online-softmax forward and the recomputing backward)
 * in double: the gradients of its own forward by finite differences, across
 * key blocks of 64 too. */
static double flash_loss(void *arg) {
    attention_case *c = arg;
    gd_cpu_flash_attention_forward_f64(NULL, c->out, c->att, c->q, c->k, c->v, c->batch,
                                       c->seq_len, c->heads, c->kv_heads, c->head_dim);
    return dot(c->out, c->r, c->batch * c->seq_len * c->heads * c->head_dim);
}

static void grad_flash_case(size_t batch, size_t seq_len, size_t heads, size_t kv_heads) {
    size_t nq, nkv, nlse = batch * heads * seq_len; /* c.att: the log-sum-exp */
    attention_case c = attention_case_new(77, batch, seq_len, heads, kv_heads, nlse, &nq, &nkv);
    flash_loss(&c);
    double *out = copy_f64(c.out, nq), *lse = copy_f64(c.att, nlse), *scratch = dalloc(nlse);
    double *dq = dalloc(nq), *dk = dalloc(nkv), *dv = dalloc(nkv);
    gd_cpu_flash_attention_backward_f64(NULL, dq, dk, dv, scratch, c.r, out, lse, c.q, c.k, c.v,
                                        c.batch, c.seq_len, heads, kv_heads, c.head_dim);
    char what[64];
    snprintf(what, sizeof what, "flash %zu/%zu T=%zu dq", heads, kv_heads, seq_len);
    CHECK_ERR(fd_error(flash_loss, &c, c.q, nq, dq), FD_TOL, what);
    snprintf(what, sizeof what, "flash %zu/%zu T=%zu dk", heads, kv_heads, seq_len);
    CHECK_ERR(fd_error(flash_loss, &c, c.k, nkv, dk), FD_TOL, what);
    snprintf(what, sizeof what, "flash %zu/%zu T=%zu dv", heads, kv_heads, seq_len);
    CHECK_ERR(fd_error(flash_loss, &c, c.v, nkv, dv), FD_TOL, what);
    double *pq = dalloc(nq), *pk = dalloc(nkv), *pv = dalloc(nkv);
    fill(pq, nq, PREFILL);
    fill(pk, nkv, PREFILL);
    fill(pv, nkv, PREFILL);
    gd_cpu_flash_attention_backward_f64(NULL, pq, pk, pv, scratch, c.r, out, lse, c.q, c.k, c.v,
                                        c.batch, c.seq_len, heads, kv_heads, c.head_dim);
    check_adds_into(pq, dq, nq);
    check_adds_into(pk, dk, nkv);
    check_adds_into(pv, dv, nkv);
    free(c.q), free(c.k), free(c.v), free(c.out), free(c.att), free(c.r), free(out), free(lse);
    free(scratch), free(dq), free(dk), free(dv), free(pq), free(pk), free(pv);
}

static void test_grad_flash_attention(void) {
    grad_flash_case(2, 5, 4, 2);  /* grouped-query */
    grad_flash_case(2, 5, 4, 1);  /* multi-query */
    grad_flash_case(1, 70, 2, 1); /* key blocks of 64: a full one and a partial one */
}

static double max_abs_diff(const double *a, const double *b, size_t n) {
    double most = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= most)) /* NaN counts */
            most = isnan(d) ? INFINITY : d;
    }
    return most;
}

static double max_abs_diff_f32(const float *a, const double *b, size_t n) {
    double most = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= most))
            most = isnan(d) ? INFINITY : d;
    }
    return most;
}

/* Flash attention against the naive op that keeps the T x T probabilities:
 * in double the same values to rounding (out, the log-sum-exp of the
 * naive scores, dq, dk, dv); in float within a bound of the double answer
 * near the naive float op's own error; and the float op's bits the same
 * for no pool and three threads. T = 130: three key blocks, the last
 * partial. */
static void test_flash_matches_naive(void) {
    size_t B = 2, T = 130, H = 4, KV = 2, hd = 8;
    size_t nq = B * T * H * hd, nkv = B * T * KV * hd, nlse = B * H * T, natt = B * H * T * T;
    gd_rng rng = test_rng(91);
    double *q = random_normal(&rng, nq, 1), *k = random_normal(&rng, nkv, 1);
    double *v = random_normal(&rng, nkv, 1), *r = random_normal(&rng, nq, 1);
    double *out_n = dalloc(nq), *att = dalloc(natt), *scratch = dalloc(natt);
    double *dq_n = dalloc(nq), *dk_n = dalloc(nkv), *dv_n = dalloc(nkv);
    gd_cpu_attention_forward_f64(NULL, out_n, att, q, k, v, B, T, H, KV, hd);
    gd_cpu_attention_backward_f64(NULL, dq_n, dk_n, dv_n, scratch, r, att, q, k, v, B, T, H, KV,
                                  hd);
    double *out_f = dalloc(nq), *lse = dalloc(nlse), *d_scratch = dalloc(nlse);
    double *dq_f = dalloc(nq), *dk_f = dalloc(nkv), *dv_f = dalloc(nkv);
    gd_cpu_flash_attention_forward_f64(NULL, out_f, lse, q, k, v, B, T, H, KV, hd);
    gd_cpu_flash_attention_backward_f64(NULL, dq_f, dk_f, dv_f, d_scratch, r, out_f, lse, q, k, v,
                                        B, T, H, KV, hd);
    CHECK_ERR(max_abs_diff(out_f, out_n, nq), 1e-12, "flash out (double)");
    CHECK_ERR(max_abs_diff(dq_f, dq_n, nq), 1e-11, "flash dq (double)");
    CHECK_ERR(max_abs_diff(dk_f, dk_n, nkv), 1e-11, "flash dk (double)");
    CHECK_ERR(max_abs_diff(dv_f, dv_n, nkv), 1e-11, "flash dv (double)");
    /* lse against the naive scores: log sum_j exp(q_t . k_j / sqrt(hd)). */
    double worst = 0;
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                const double *qt = q + (b * T + t) * H * hd + h * hd;
                double sum = 0;
                for (size_t j = 0; j <= t; j++)
                    sum += exp(dot(qt, k + (b * T + j) * KV * hd + h / (H / KV) * hd, hd) /
                               sqrt((double)hd));
                double d = fabs(log(sum) - lse[(b * H + h) * T + t]);
                worst = d > worst ? d : worst;
            }
    CHECK_ERR(worst, 1e-12, "flash log-sum-exp (double)");

    float *qf = to_f32(q, nq), *kf = to_f32(k, nkv), *vf = to_f32(v, nkv), *rf = to_f32(r, nq);
    gd_pool *three = NULL;
    CHECK_OK(gd_pool_new(&three, 3));
    float *o[2], *l[2], *s[2], *g[2][3];
    for (int run = 0; run < 2; run++) {
        gd_pool *pool = run ? three : NULL;
        o[run] = falloc(nq), l[run] = falloc(nlse), s[run] = falloc(nlse);
        g[run][0] = falloc(nq), g[run][1] = falloc(nkv), g[run][2] = falloc(nkv);
        gd_cpu_flash_attention_forward_f32(pool, o[run], l[run], qf, kf, vf, B, T, H, KV, hd);
        gd_cpu_flash_attention_backward_f32(pool, g[run][0], g[run][1], g[run][2], s[run], rf,
                                            o[run], l[run], qf, kf, vf, B, T, H, KV, hd);
    }
    CHECK(memcmp(o[0], o[1], nq * sizeof(float)) == 0);
    CHECK(memcmp(l[0], l[1], nlse * sizeof(float)) == 0);
    CHECK(memcmp(g[0][0], g[1][0], nq * sizeof(float)) == 0);
    CHECK(memcmp(g[0][1], g[1][1], nkv * sizeof(float)) == 0);
    CHECK(memcmp(g[0][2], g[1][2], nkv * sizeof(float)) == 0);
    CHECK_ERR(max_abs_diff_f32(o[0], out_n, nq), 1e-5, "flash out (float)");
    CHECK_ERR(max_abs_diff_f32(g[0][0], dq_n, nq), 1e-4, "flash dq (float)");
    CHECK_ERR(max_abs_diff_f32(g[0][1], dk_n, nkv), 1e-4, "flash dk (float)");
    CHECK_ERR(max_abs_diff_f32(g[0][2], dv_n, nkv), 1e-4, "flash dv (float)");
    for (int run = 0; run < 2; run++) {
        free(o[run]), free(l[run]), free(s[run]);
        free(g[run][0]), free(g[run][1]), free(g[run][2]);
    }
    gd_pool_free(three);
    free(qf), free(kf), free(vf), free(rf);
    free(q), free(k), free(v), free(r), free(out_n), free(att), free(scratch);
    free(dq_n), free(dk_n), free(dv_n), free(out_f), free(lse), free(d_scratch);
    free(dq_f), free(dk_f), free(dv_f);
}

typedef struct swiglu_case {
    size_t n;
    double *gate, *up, *out, *r;
} swiglu_case;

static double swiglu_loss(void *arg) {
    swiglu_case *c = arg;
    gd_cpu_swiglu_forward_f64(NULL, c->out, c->gate, c->up, c->n);
    return dot(c->out, c->r, c->n);
}

static void test_grad_swiglu(void) {
    gd_rng rng = test_rng(6);
    swiglu_case c = {.n = 40};
    c.gate = random_normal(&rng, c.n, 3); /* both signs, both sigmoid branches */
    c.up = random_normal(&rng, c.n, 1);
    c.out = dalloc(c.n);
    c.r = random_normal(&rng, c.n, 1);
    double *dgate = dalloc(c.n), *dup = dalloc(c.n);
    gd_cpu_swiglu_backward_f64(NULL, dgate, dup, c.r, c.gate, c.up, c.n);
    CHECK_ERR(fd_error(swiglu_loss, &c, c.gate, c.n, dgate), FD_TOL, "swiglu dgate");
    CHECK_ERR(fd_error(swiglu_loss, &c, c.up, c.n, dup), FD_TOL, "swiglu dup");
    double *pg = dalloc(c.n), *pu = dalloc(c.n);
    fill(pg, c.n, PREFILL);
    fill(pu, c.n, PREFILL);
    gd_cpu_swiglu_backward_f64(NULL, pg, pu, c.r, c.gate, c.up, c.n);
    check_adds_into(pg, dgate, c.n);
    check_adds_into(pu, dup, c.n);
    free(c.gate), free(c.up), free(c.out), free(c.r), free(dgate), free(dup), free(pg);
    free(pu);
}

typedef struct cross_entropy_case {
    size_t n, vocab;
    int32_t *targets;
    double *logits, *losses, dloss;
} cross_entropy_case;

static double cross_entropy_loss(void *arg) {
    cross_entropy_case *c = arg;
    gd_cpu_cross_entropy_forward_f64(NULL, c->losses, c->logits, c->targets, c->n, c->vocab);
    double sum = 0;
    for (size_t i = 0; i < c->n; i++)
        sum += c->losses[i];
    return c->dloss * sum;
}

static void test_grad_cross_entropy(void) {
    gd_rng rng = test_rng(7);
    cross_entropy_case c = {.n = 4, .vocab = 9, .dloss = 0.7};
    size_t nv = c.n * c.vocab;
    c.targets = random_tokens(&rng, c.n, c.vocab);
    c.logits = random_normal(&rng, nv, 2);
    c.losses = dalloc(c.n);
    double *dlogits = dalloc(nv);
    fill(dlogits, nv, PREFILL); /* the backward overwrites */
    gd_cpu_cross_entropy_backward_f64(NULL, dlogits, c.logits, c.targets, c.dloss, c.n,
                                      c.vocab);
    CHECK_ERR(fd_error(cross_entropy_loss, &c, c.logits, nv, dlogits), FD_TOL,
              "cross entropy dlogits");
    free(c.targets), free(c.logits), free(c.losses), free(dlogits);
}

/* --- forwards against naive loops (double) ------------------------------------------ */

static void test_forward_reference(void) {
    gd_rng rng = test_rng(10);
    gd_pool *pool = NULL;
    CHECK_OK(gd_pool_new(&pool, 2));

    /* matmul, forward and both gradients, on shapes with partial tiles in
     * every dimension of every product */
    size_t n = 140, in_dim = 260, out_dim = 270;
    double *inp = random_normal(&rng, n * in_dim, 1), *w = random_normal(&rng, out_dim * in_dim, 1);
    double *dout = random_normal(&rng, n * out_dim, 1);
    double *out = dalloc(n * out_dim), *ref = dalloc(n * out_dim);
    double *dinp = dalloc(n * in_dim), *dinp_ref = dalloc(n * in_dim);
    double *dw = dalloc(out_dim * in_dim), *dw_ref = dalloc(out_dim * in_dim);
    gd_cpu_matmul_forward_f64(pool, out, inp, w, n, in_dim, out_dim);
    fill(dinp, n * in_dim, 1);
    fill(dw, out_dim * in_dim, -1);
    gd_cpu_matmul_backward_f64(pool, dinp, dw, dout, inp, w, n, in_dim, out_dim);
    for (size_t i = 0; i < n; i++)
        for (size_t o = 0; o < out_dim; o++) {
            double s = 0;
            for (size_t k = 0; k < in_dim; k++)
                s += inp[i * in_dim + k] * w[o * in_dim + k];
            ref[i * out_dim + o] = s;
            for (size_t k = 0; k < in_dim; k++) {
                dinp_ref[i * in_dim + k] += dout[i * out_dim + o] * w[o * in_dim + k];
                dw_ref[o * in_dim + k] += dout[i * out_dim + o] * inp[i * in_dim + k];
            }
        }
    for (size_t i = 0; i < n * in_dim; i++)
        dinp_ref[i] += 1;
    for (size_t i = 0; i < out_dim * in_dim; i++)
        dw_ref[i] -= 1;
    CHECK_ERR(rel_err(out, ref, n * out_dim), 1e-13, "matmul forward");
    CHECK_ERR(rel_err(dinp, dinp_ref, n * in_dim), 1e-13, "matmul dinp");
    CHECK_ERR(rel_err(dw, dw_ref, out_dim * in_dim), 1e-13, "matmul dweight");
    free(inp), free(w), free(dout), free(out), free(ref), free(dinp), free(dinp_ref), free(dw);
    free(dw_ref);

    /* attention: scores, causal softmax and the weighted sum, per element;
     * T = 70 spans two query-row blocks */
    size_t B = 2, T = 70, H = 4, KV = 2, hd = 5;
    double *q = random_normal(&rng, B * T * H * hd, 1);
    double *k = random_normal(&rng, B * T * KV * hd, 1);
    double *v = random_normal(&rng, B * T * KV * hd, 1);
    double *aout = dalloc(B * T * H * hd), *att = dalloc(B * H * T * T);
    gd_cpu_attention_forward_f64(pool, aout, att, q, k, v, B, T, H, KV, hd);
    double att_err = 0, out_err = 0;
    int upper_zero = 1;
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                size_t kvh = h / (H / KV);
                double s[70], max = -INFINITY, sum = 0;
                for (size_t j = 0; j <= t; j++) {
                    const double *qt = q + ((b * T + t) * H + h) * hd;
                    const double *kj = k + ((b * T + j) * KV + kvh) * hd;
                    s[j] = 0;
                    for (size_t d = 0; d < hd; d++)
                        s[j] += qt[d] * kj[d];
                    s[j] /= sqrt((double)hd);
                    max = fmax(max, s[j]);
                }
                for (size_t j = 0; j <= t; j++)
                    sum += exp(s[j] - max);
                const double *a = att + ((b * H + h) * T + t) * T;
                for (size_t j = 0; j < T; j++) {
                    if (j > t) {
                        upper_zero &= a[j] == 0;
                        continue;
                    }
                    att_err = fmax(att_err, fabs(a[j] - exp(s[j] - max) / sum));
                }
                for (size_t d = 0; d < hd; d++) {
                    double o = 0;
                    for (size_t j = 0; j <= t; j++)
                        o += exp(s[j] - max) / sum * v[((b * T + j) * KV + kvh) * hd + d];
                    out_err = fmax(out_err, fabs(aout[((b * T + t) * H + h) * hd + d] - o));
                }
            }
    CHECK_ERR(att_err, 1e-14, "attention probabilities");
    CHECK_ERR(out_err, 1e-13, "attention output");
    CHECK(upper_zero);
    free(q), free(k), free(v), free(aout), free(att);

    /* rope tables and rotation against the formulas */
    size_t max_pos = 11, rhd = 12, half = rhd / 2, rheads = 3;
    double theta = 10000;
    double *cs = dalloc(max_pos * half), *sn = dalloc(max_pos * half);
    float *cs32 = falloc(max_pos * half), *sn32 = falloc(max_pos * half);
    gd_cpu_rope_tables_f64(cs, sn, max_pos, rhd, theta);
    gd_cpu_rope_tables_f32(cs32, sn32, max_pos, rhd, theta);
    double table_err = 0;
    int rounded_once = 1;
    for (size_t p = 0; p < max_pos; p++)
        for (size_t i = 0; i < half; i++) {
            double angle = (double)p * pow(theta, -(double)(2 * i) / (double)rhd);
            table_err = fmax(table_err, fabs(cs[p * half + i] - cos(angle)));
            table_err = fmax(table_err, fabs(sn[p * half + i] - sin(angle)));
            rounded_once &= cs32[p * half + i] == (float)cs[p * half + i];
            rounded_once &= sn32[p * half + i] == (float)sn[p * half + i];
        }
    CHECK_ERR(table_err, 1e-15, "rope tables");
    CHECK(rounded_once);
    size_t rb = 2, rt = max_pos, rn = rb * rt * rheads * rhd;
    double *rx = random_normal(&rng, rn, 1), *ry = dalloc(rn);
    gd_cpu_rope_forward_f64(pool, ry, rx, cs, sn, rb, rt, rheads, rhd);
    double rope_err = 0;
    for (size_t row = 0; row < rb * rt; row++)
        for (size_t h = 0; h < rheads; h++)
            for (size_t i = 0; i < half; i++) {
                double angle = (double)(row % rt) * pow(theta, -(double)(2 * i) / (double)rhd);
                const double *x = rx + (row * rheads + h) * rhd;
                const double *y = ry + (row * rheads + h) * rhd;
                double c = cos(angle), s = sin(angle);
                rope_err = fmax(rope_err, fabs(y[i] - (x[i] * c - x[i + half] * s)));
                rope_err = fmax(rope_err, fabs(y[i + half] - (x[i + half] * c + x[i] * s)));
            }
    CHECK_ERR(rope_err, 1e-14, "rope forward");
    free(cs), free(sn), free(cs32), free(sn32), free(rx), free(ry);

    /* RMSNorm, embedding, SwiGLU, cross entropy, elementwise */
    size_t rows = 9, dim = 70, vocab = 13;
    double *x = random_normal(&rng, rows * dim, 2), *g = random_normal(&rng, dim, 1);
    double *y = dalloc(rows * dim), *rstd = dalloc(rows);
    gd_cpu_rmsnorm_forward_f64(pool, y, rstd, x, g, rows, dim, 1e-6);
    double norm_err = 0;
    for (size_t i = 0; i < rows; i++) {
        double ms = 0;
        for (size_t j = 0; j < dim; j++)
            ms += x[i * dim + j] * x[i * dim + j] / (double)dim;
        double r = 1 / sqrt(ms + 1e-6);
        norm_err = fmax(norm_err, fabs(rstd[i] - r) / r);
        for (size_t j = 0; j < dim; j++)
            norm_err = fmax(norm_err, fabs(y[i * dim + j] - g[j] * x[i * dim + j] * r));
    }
    CHECK_ERR(norm_err, 1e-14, "rmsnorm forward");

    int32_t *tokens = random_tokens(&rng, rows, vocab);
    double *table = random_normal(&rng, vocab * dim, 1), *emb = dalloc(rows * dim);
    gd_cpu_embedding_forward_f64(pool, emb, tokens, table, rows, dim);
    for (size_t i = 0; i < rows; i++)
        CHECK(memcmp(emb + i * dim, table + (size_t)tokens[i] * dim, dim * sizeof(double)) == 0);

    double *sw = dalloc(rows * dim);
    gd_cpu_swiglu_forward_f64(pool, sw, x, y, rows * dim);
    double sw_err = 0;
    for (size_t i = 0; i < rows * dim; i++)
        sw_err = fmax(sw_err, fabs(sw[i] - x[i] / (1 + exp(-x[i])) * y[i]));
    CHECK_ERR(sw_err, 1e-14, "swiglu forward");

    double *logits = random_normal(&rng, rows * vocab, 3), *losses = dalloc(rows);
    gd_cpu_cross_entropy_forward_f64(pool, losses, logits, tokens, rows, vocab);
    double ce_err = 0;
    for (size_t i = 0; i < rows; i++) {
        double sum = 0;
        for (size_t j = 0; j < vocab; j++)
            sum += exp(logits[i * vocab + j]);
        ce_err = fmax(ce_err, fabs(losses[i] - (log(sum) - logits[i * vocab + (size_t)tokens[i]])));
    }
    CHECK_ERR(ce_err, 1e-13, "cross entropy forward");

    size_t m = rows * dim;
    double *sum = dalloc(m), *acc = copy_f64(x, m);
    gd_cpu_add_f64(pool, sum, x, y, m);
    gd_cpu_accumulate_f64(pool, acc, y, m);
    int elementwise_ok = 1;
    for (size_t i = 0; i < m; i++)
        elementwise_ok &= sum[i] == x[i] + y[i] && acc[i] == x[i] + y[i];
    gd_cpu_scale_f64(pool, acc, -0.5, m);
    for (size_t i = 0; i < m; i++)
        elementwise_ok &= acc[i] == (x[i] + y[i]) * -0.5;
    CHECK(elementwise_ok);
    double ss = 0;
    for (size_t i = 0; i < m; i++)
        ss += x[i] * x[i];
    CHECK_ERR(fabs(gd_cpu_sum_squares_f64(pool, x, m) - ss) / ss, 1e-15, "sum_squares");

    free(x), free(g), free(y), free(rstd), free(tokens), free(table), free(emb), free(sw);
    free(logits), free(losses), free(sum), free(acc);
    gd_pool_free(pool);
}

/* --- float against double ----------------------------------------------------------- */

/* The same (float-representable) inputs through both precisions. Float
 * carries 24 bits (6e-8); each op adds a few ulps per operation, which
 * measures 3e-8 to 5e-7 of a result's scale on these shapes. 1e-5 leaves a
 * twentyfold margin and still catches a formula that differs between the
 * precisions or loses its double accumulation where cancellation matters. */
#define F32_TOL 1e-5

static void test_f32_matches_f64(void) {
    gd_rng rng = test_rng(20);
    size_t n = 37, dim = 70, hidden = 130, vocab = 50;

    /* embedding */
    int32_t *tokens = random_tokens(&rng, n, vocab);
    double *table = random_normal(&rng, vocab * dim, 1), *demb = random_normal(&rng, n * dim, 1);
    float *table32 = to_f32(table, vocab * dim), *demb32 = to_f32(demb, n * dim);
    double *emb = dalloc(n * dim), *dtable = dalloc(vocab * dim);
    float *emb32 = falloc(n * dim), *dtable32 = falloc(vocab * dim);
    gd_cpu_embedding_forward_f64(NULL, emb, tokens, table, n, dim);
    gd_cpu_embedding_forward_f32(NULL, emb32, tokens, table32, n, dim);
    gd_cpu_embedding_backward_f64(NULL, dtable, demb, tokens, n, dim);
    gd_cpu_embedding_backward_f32(NULL, dtable32, demb32, tokens, n, dim);
    CHECK_ERR(rel_err_f32(emb32, emb, n * dim), 0, "f32 embedding forward");
    CHECK_ERR(rel_err_f32(dtable32, dtable, vocab * dim), F32_TOL, "f32 embedding backward");

    /* RMSNorm */
    double *w = random_normal(&rng, dim, 1), *y = dalloc(n * dim), *rstd = dalloc(n);
    float *w32 = to_f32(w, dim), *y32 = falloc(n * dim), *rstd32 = falloc(n);
    double *dx = dalloc(n * dim), *dw = dalloc(dim);
    float *dx32 = falloc(n * dim), *dw32 = falloc(dim);
    gd_cpu_rmsnorm_forward_f64(NULL, y, rstd, emb, w, n, dim, 1e-5);
    gd_cpu_rmsnorm_forward_f32(NULL, y32, rstd32, emb32, w32, n, dim, 1e-5);
    gd_cpu_rmsnorm_backward_f64(NULL, dx, dw, demb, emb, w, rstd, n, dim);
    gd_cpu_rmsnorm_backward_f32(NULL, dx32, dw32, demb32, emb32, w32, rstd32, n, dim);
    CHECK_ERR(rel_err_f32(y32, y, n * dim), F32_TOL, "f32 rmsnorm forward");
    CHECK_ERR(rel_err_f32(rstd32, rstd, n), F32_TOL, "f32 rmsnorm rstd");
    CHECK_ERR(rel_err_f32(dx32, dx, n * dim), F32_TOL, "f32 rmsnorm dinp");
    CHECK_ERR(rel_err_f32(dw32, dw, dim), F32_TOL, "f32 rmsnorm dweight");

    /* matmul */
    double *mw = random_normal(&rng, hidden * dim, 0.1), *mo = dalloc(n * hidden);
    double *mdo = random_normal(&rng, n * hidden, 1);
    double *mdx = dalloc(n * dim), *mdw = dalloc(hidden * dim);
    float *mw32 = to_f32(mw, hidden * dim), *mo32 = falloc(n * hidden);
    float *mdo32 = to_f32(mdo, n * hidden), *mdx32 = falloc(n * dim), *mdw32 = falloc(hidden * dim);
    gd_cpu_matmul_forward_f64(NULL, mo, emb, mw, n, dim, hidden);
    gd_cpu_matmul_forward_f32(NULL, mo32, emb32, mw32, n, dim, hidden);
    gd_cpu_matmul_backward_f64(NULL, mdx, mdw, mdo, emb, mw, n, dim, hidden);
    gd_cpu_matmul_backward_f32(NULL, mdx32, mdw32, mdo32, emb32, mw32, n, dim, hidden);
    CHECK_ERR(rel_err_f32(mo32, mo, n * hidden), F32_TOL, "f32 matmul forward");
    CHECK_ERR(rel_err_f32(mdx32, mdx, n * dim), F32_TOL, "f32 matmul dinp");
    CHECK_ERR(rel_err_f32(mdw32, mdw, hidden * dim), F32_TOL, "f32 matmul dweight");

    /* rope and attention on (B, T) = (1, 37), 5 heads / 1 kv head of 14 */
    size_t T = n, H = 5, KV = 1, hd = 14, half = hd / 2;
    double *cs = dalloc(T * half), *sn = dalloc(T * half);
    float *cs32 = falloc(T * half), *sn32 = falloc(T * half);
    gd_cpu_rope_tables_f64(cs, sn, T, hd, 10000);
    gd_cpu_rope_tables_f32(cs32, sn32, T, hd, 10000);
    double *rq = dalloc(n * dim), *drq = dalloc(n * dim);
    float *rq32 = falloc(n * dim), *drq32 = falloc(n * dim);
    gd_cpu_rope_forward_f64(NULL, rq, emb, cs, sn, 1, T, H, hd);
    gd_cpu_rope_forward_f32(NULL, rq32, emb32, cs32, sn32, 1, T, H, hd);
    gd_cpu_rope_backward_f64(NULL, drq, demb, cs, sn, 1, T, H, hd);
    gd_cpu_rope_backward_f32(NULL, drq32, demb32, cs32, sn32, 1, T, H, hd);
    CHECK_ERR(rel_err_f32(rq32, rq, n * dim), F32_TOL, "f32 rope forward");
    CHECK_ERR(rel_err_f32(drq32, drq, n * dim), F32_TOL, "f32 rope backward");

    size_t nkv = T * KV * hd, natt = H * T * T;
    double *k = random_normal(&rng, nkv, 1), *v = random_normal(&rng, nkv, 1);
    float *k32 = to_f32(k, nkv), *v32 = to_f32(v, nkv);
    double *ao = dalloc(n * dim), *att = dalloc(natt), *scr = dalloc(natt);
    double *dq = dalloc(n * dim), *dk = dalloc(nkv), *dv = dalloc(nkv);
    float *ao32 = falloc(n * dim), *att32 = falloc(natt), *scr32 = falloc(natt);
    float *dq32 = falloc(n * dim), *dk32 = falloc(nkv), *dv32 = falloc(nkv);
    gd_cpu_attention_forward_f64(NULL, ao, att, emb, k, v, 1, T, H, KV, hd);
    gd_cpu_attention_forward_f32(NULL, ao32, att32, emb32, k32, v32, 1, T, H, KV, hd);
    gd_cpu_attention_backward_f64(NULL, dq, dk, dv, scr, demb, att, emb, k, v, 1, T, H, KV, hd);
    gd_cpu_attention_backward_f32(NULL, dq32, dk32, dv32, scr32, demb32, att32, emb32, k32, v32,
                                  1, T, H, KV, hd);
    CHECK_ERR(rel_err_f32(ao32, ao, n * dim), F32_TOL, "f32 attention forward");
    CHECK_ERR(rel_err_f32(att32, att, natt), F32_TOL, "f32 attention probabilities");
    CHECK_ERR(rel_err_f32(dq32, dq, n * dim), F32_TOL, "f32 attention dq");
    CHECK_ERR(rel_err_f32(dk32, dk, nkv), F32_TOL, "f32 attention dk");
    CHECK_ERR(rel_err_f32(dv32, dv, nkv), F32_TOL, "f32 attention dv");

    /* SwiGLU, cross entropy on the matmul's output as logits */
    size_t m = n * hidden;
    double *gate = random_normal(&rng, m, 4), *sw = dalloc(m), *dg = dalloc(m), *du = dalloc(m);
    float *gate32 = to_f32(gate, m), *sw32 = falloc(m), *dg32 = falloc(m), *du32 = falloc(m);
    double *up = copy_f64(mdo, m);
    gd_cpu_swiglu_forward_f64(NULL, sw, gate, up, m);
    gd_cpu_swiglu_forward_f32(NULL, sw32, gate32, mdo32, m);
    gd_cpu_swiglu_backward_f64(NULL, dg, du, mdo, gate, up, m);
    gd_cpu_swiglu_backward_f32(NULL, dg32, du32, mdo32, gate32, mdo32, m);
    CHECK_ERR(rel_err_f32(sw32, sw, m), F32_TOL, "f32 swiglu forward");
    CHECK_ERR(rel_err_f32(dg32, dg, m), F32_TOL, "f32 swiglu dgate");
    CHECK_ERR(rel_err_f32(du32, du, m), F32_TOL, "f32 swiglu dup");

    double *logits = random_normal(&rng, m, 3), *losses = dalloc(n), *dl = dalloc(m);
    float *logits32 = to_f32(logits, m), *losses32 = falloc(n), *dl32 = falloc(m);
    int32_t *targets = random_tokens(&rng, n, hidden);
    gd_cpu_cross_entropy_forward_f64(NULL, losses, logits, targets, n, hidden);
    gd_cpu_cross_entropy_forward_f32(NULL, losses32, logits32, targets, n, hidden);
    gd_cpu_cross_entropy_backward_f64(NULL, dl, logits, targets, 1.0 / 37, n, hidden);
    gd_cpu_cross_entropy_backward_f32(NULL, dl32, logits32, targets, 1.0 / 37, n, hidden);
    CHECK_ERR(rel_err_f32(losses32, losses, n), F32_TOL, "f32 cross entropy forward");
    CHECK_ERR(rel_err_f32(dl32, dl, m), F32_TOL, "f32 cross entropy backward");

    free(tokens), free(table), free(demb), free(table32), free(demb32), free(emb), free(dtable);
    free(emb32), free(dtable32), free(w), free(y), free(rstd), free(w32), free(y32), free(rstd32);
    free(dx), free(dw), free(dx32), free(dw32), free(mw), free(mo), free(mdo), free(mdx);
    free(mdw), free(mw32), free(mo32), free(mdo32), free(mdx32), free(mdw32), free(cs), free(sn);
    free(cs32), free(sn32), free(rq), free(drq), free(rq32), free(drq32), free(k), free(v);
    free(k32), free(v32), free(ao), free(att), free(scr), free(dq), free(dk), free(dv);
    free(ao32), free(att32), free(scr32), free(dq32), free(dk32), free(dv32), free(gate);
    free(sw), free(dg), free(du), free(gate32), free(sw32), free(dg32), free(du32), free(up);
    free(logits), free(losses), free(dl), free(logits32), free(losses32), free(dl32);
    free(targets);
}

/* --- determinism across thread counts ------------------------------------------------ */

/* Shapes that are not multiples of any tile or chunk: 300 rows (tiles of 128
 * rows end at 44), widths 70 and 130, a 300 x 520 x 600 matmul with three
 * row tiles and three (or more) column tiles in each of its products. */
enum { DET_ROWS = 300, DET_BATCH = 3, DET_T = 100, DET_DIM = 130, DET_VOCAB = 70,
       DET_IN = 520, DET_OUT = 600, DET_HEADS = 4, DET_KV = 2, DET_HD = 16,
       DET_RHEADS = 5, DET_RHD = 14 };

typedef struct det_inputs {
    int32_t *tokens, *targets;
    float *a, *b, *table, *weight, *mw, *mdout, *wide, *q, *k, *v, *cs, *sn, *logits, *m, *v2;
} det_inputs;

/* All outputs of one run are carved in a fixed sequence from one zeroed
 * arena, so two runs compare with a single memcmp. */
typedef struct det_arena {
    float *base;
    size_t used, cap;
} det_arena;

static float *carve(det_arena *a, size_t n) {
    if (a->used + n > a->cap)
        abort();
    float *p = a->base + a->used;
    a->used += n;
    return p;
}

static void det_run(const det_inputs *in, gd_pool *pool, det_arena *ar) {
    size_t n = DET_ROWS, dim = DET_DIM, nd = n * dim;
    float *x = carve(ar, nd), *y = carve(ar, nd), *rstd = carve(ar, n);
    gd_cpu_embedding_forward_f32(pool, x, in->tokens, in->table, n, dim);
    gd_cpu_embedding_backward_f32(pool, carve(ar, DET_VOCAB * dim), in->b, in->tokens, n, dim);
    gd_cpu_rmsnorm_forward_f32(pool, y, rstd, in->a, in->weight, n, dim, 1e-5);
    gd_cpu_rmsnorm_backward_f32(pool, carve(ar, nd), carve(ar, dim), in->b, in->a, in->weight,
                                rstd, n, dim);

    gd_cpu_matmul_forward_f32(pool, carve(ar, n * DET_OUT), in->wide, in->mw, n, DET_IN,
                              DET_OUT);
    gd_cpu_matmul_backward_f32(pool, carve(ar, n * DET_IN), carve(ar, DET_OUT * DET_IN),
                               in->mdout, in->wide, in->mw, n, DET_IN, DET_OUT);

    size_t rn = n * DET_RHEADS * DET_RHD; /* = 300 x 70 */
    gd_cpu_rope_forward_f32(pool, carve(ar, rn), in->a, in->cs, in->sn, DET_BATCH, DET_T,
                            DET_RHEADS, DET_RHD);
    gd_cpu_rope_backward_f32(pool, carve(ar, rn), in->b, in->cs, in->sn, DET_BATCH, DET_T,
                             DET_RHEADS, DET_RHD);

    size_t nq = n * DET_HEADS * DET_HD, nkv = n * DET_KV * DET_HD;
    size_t natt = (size_t)DET_BATCH * DET_HEADS * DET_T * DET_T;
    float *att = carve(ar, natt);
    gd_cpu_attention_forward_f32(pool, carve(ar, nq), att, in->q, in->k, in->v, DET_BATCH,
                                 DET_T, DET_HEADS, DET_KV, DET_HD);
    gd_cpu_attention_backward_f32(pool, carve(ar, nq), carve(ar, nkv), carve(ar, nkv),
                                  carve(ar, natt), in->b, att, in->q, in->k, in->v, DET_BATCH,
                                  DET_T, DET_HEADS, DET_KV, DET_HD);

    gd_cpu_swiglu_forward_f32(pool, carve(ar, nd), in->a, in->b, nd);
    gd_cpu_swiglu_backward_f32(pool, carve(ar, nd), carve(ar, nd), in->q, in->a, in->b, nd);
    float *sum = carve(ar, nd);
    gd_cpu_add_f32(pool, sum, in->a, in->b, nd);
    gd_cpu_accumulate_f32(pool, sum, in->a, nd);
    gd_cpu_scale_f32(pool, sum, 0.3, nd);
    double ss = gd_cpu_sum_squares_f32(pool, sum, nd);
    memcpy(carve(ar, 2), &ss, sizeof ss);

    gd_cpu_cross_entropy_forward_f32(pool, carve(ar, n), in->logits, in->targets, n,
                                     DET_VOCAB);
    gd_cpu_cross_entropy_backward_f32(pool, carve(ar, n * DET_VOCAB), in->logits, in->targets,
                                      0.01, n, DET_VOCAB);

    float *param = carve(ar, nd), *m = carve(ar, nd), *v = carve(ar, nd);
    memcpy(param, in->a, nd * sizeof(float));
    memcpy(m, in->m, nd * sizeof(float));
    memcpy(v, in->v2, nd * sizeof(float));
    for (int t = 1; t <= 3; t++)
        gd_cpu_adamw_f32(pool, param, in->b, m, v, nd, 1e-3, 0.9, 0.95, 1e-8, 0.1,
                         1 - pow(0.9, t), 1 - pow(0.95, t), 0.5);
}

static float *det_random(gd_rng *rng, size_t n, double scale) {
    double *d = random_normal(rng, n, scale);
    float *f = to_f32(d, n);
    free(d);
    return f;
}

static void test_thread_determinism(void) {
    gd_rng rng = test_rng(30);
    size_t n = DET_ROWS, nd = n * DET_DIM;
    det_inputs in;
    in.tokens = random_tokens(&rng, n, DET_VOCAB);
    in.targets = random_tokens(&rng, n, DET_VOCAB);
    in.a = det_random(&rng, nd, 1);
    in.b = det_random(&rng, nd, 1);
    in.table = det_random(&rng, DET_VOCAB * DET_DIM, 1);
    in.weight = det_random(&rng, DET_DIM, 1);
    in.mw = det_random(&rng, DET_OUT * DET_IN, 0.05);
    in.mdout = det_random(&rng, n * DET_OUT, 1);
    in.wide = det_random(&rng, n * DET_IN, 1);
    in.q = det_random(&rng, nd, 1); /* also read as SwiGLU's dout */
    in.k = det_random(&rng, n * DET_KV * DET_HD, 1);
    in.v = det_random(&rng, n * DET_KV * DET_HD, 1);
    in.cs = falloc(DET_T * DET_RHD / 2);
    in.sn = falloc(DET_T * DET_RHD / 2);
    gd_cpu_rope_tables_f32(in.cs, in.sn, DET_T, DET_RHD, 10000);
    in.logits = det_random(&rng, n * DET_VOCAB, 3);
    in.m = det_random(&rng, nd, 0.01);
    in.v2 = det_random(&rng, nd, 0.01);
    for (size_t i = 0; i < nd; i++)
        in.v2[i] *= in.v2[i];

    size_t cap = 6000000;
    det_arena first = {falloc(cap), 0, cap};
    det_run(&in, NULL, &first);
    for (int threads = 1; threads <= 3; threads++) {
        gd_pool *pool = NULL;
        CHECK_OK(gd_pool_new(&pool, threads));
        det_arena again = {falloc(cap), 0, cap};
        det_run(&in, pool, &again);
        CHECK(again.used == first.used);
        if (memcmp(again.base, first.base, first.used * sizeof(float)) != 0) {
            size_t i = 0;
            while (memcmp(&again.base[i], &first.base[i], sizeof(float)) == 0)
                i++;
            fprintf(stderr, "  %d threads: first difference at arena float %zu\n", threads, i);
            gd_test_failures++;
        }
        free(again.base);
        gd_pool_free(pool);
    }
    free(first.base);
    free(in.tokens), free(in.targets), free(in.a), free(in.b), free(in.table), free(in.weight);
    free(in.mw), free(in.mdout), free(in.wide), free(in.q), free(in.k), free(in.v), free(in.cs);
    free(in.sn), free(in.logits), free(in.m), free(in.v2);
}

static void test_sum_squares_threads(void) {
    gd_rng rng = test_rng(31);
    size_t n = 200003; /* four chunks, the last one short */
    float *x = det_random(&rng, n, 1);
    gd_pool *one = NULL, *three = NULL;
    CHECK_OK(gd_pool_new(&one, 1));
    CHECK_OK(gd_pool_new(&three, 3));
    double a = gd_cpu_sum_squares_f32(one, x, n), b = gd_cpu_sum_squares_f32(three, x, n);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(gd_cpu_sum_squares_f32(NULL, x, n) == a);
    double ref = 0;
    for (size_t i = 0; i < n; i++)
        ref += (double)x[i] * (double)x[i];
    CHECK_ERR(fabs(a - ref) / ref, 1e-13, "sum_squares f32");
    gd_pool_free(one);
    gd_pool_free(three);
    free(x);
}

/* --- AdamW ---------------------------------------------------------------------------- */

/* Step 1 (bc1 = 1 - 0.9 = 0.1, bc2 = 1 - 0.999 = 0.001), lr 0.1, weight
 * decay 0.01, eps 1e-8, grad_scale 2, m = v = 0 before:
 *   p = 1, grad 0.5:   g = 1; p = 1 * 0.999; m = 0.1; v = 0.001;
 *     denom = sqrt(0.001) / sqrt(0.001) + 1e-8 = 1 + 1e-8;
 *     p = 0.999 - (0.1 / 0.1) * 0.1 / (1 + 1e-8) = 0.899 + 1e-9 (to 1e-17)
 *   p = -2, grad -0.25: g = -0.5; p = -1.998; m = -0.05; v = 0.00025;
 *     denom = sqrt(0.25) + 1e-8 = 0.5 + 1e-8;
 *     p = -1.998 + 0.05 / (0.5 + 1e-8) = -1.898 - 2e-9 (to 1e-16) */
static void test_adamw_one_step(void) {
    double p[2] = {1, -2}, g[2] = {0.5, -0.25}, m[2] = {0}, v[2] = {0};
    gd_cpu_adamw_f64(NULL, p, g, m, v, 2, 0.1, 0.9, 0.999, 1e-8, 0.01, 1 - 0.9, 1 - 0.999, 2);
    CHECK_ERR(fabs(p[0] - 0.899000001), 1e-15, "adamw p[0]");
    CHECK_ERR(fabs(p[1] - -1.898000002), 1e-15, "adamw p[1]");
    CHECK_ERR(fabs(m[0] - 0.1) / 0.1 + fabs(m[1] - -0.05) / 0.05, 1e-15, "adamw m");
    CHECK_ERR(fabs(v[0] - 0.001) / 0.001 + fabs(v[1] - 0.00025) / 0.00025, 1e-12, "adamw v");
    float pf[2] = {1, -2}, gf[2] = {0.5f, -0.25f}, mf[2] = {0}, vf[2] = {0};
    gd_cpu_adamw_f32(NULL, pf, gf, mf, vf, 2, 0.1, 0.9, 0.999, 1e-8, 0.01, 1 - 0.9, 1 - 0.999, 2);
    CHECK_ERR(fabs(pf[0] - 0.899000001), 2e-7, "adamw f32 p[0]");
    CHECK_ERR(fabs(pf[1] - -1.898000002), 2e-7, "adamw f32 p[1]");
}

/* Ten steps with fresh gradients against the documented formula in plain
 * double, for both precisions. */
static void test_adamw_steps(void) {
    gd_rng rng = test_rng(40);
    size_t n = 1000;
    double *p = random_normal(&rng, n, 1), *m = dalloc(n), *v = dalloc(n);
    double *rp = copy_f64(p, n), *rm = dalloc(n), *rv = dalloc(n);
    float *pf = to_f32(p, n), *mf = falloc(n), *vf = falloc(n);
    double lr = 3e-3, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1, gs = 0.25;
    for (int t = 1; t <= 10; t++) {
        double *g = random_normal(&rng, n, 1);
        float *gf = to_f32(g, n);
        double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
        gd_cpu_adamw_f64(NULL, p, g, m, v, n, lr, b1, b2, eps, wd, bc1, bc2, gs);
        gd_cpu_adamw_f32(NULL, pf, gf, mf, vf, n, lr, b1, b2, eps, wd, bc1, bc2, gs);
        for (size_t i = 0; i < n; i++) {
            double gi = g[i] * gs;
            rp[i] *= 1 - lr * wd;
            rm[i] = b1 * rm[i] + (1 - b1) * gi;
            rv[i] = b2 * rv[i] + (1 - b2) * gi * gi;
            rp[i] -= lr / bc1 * rm[i] / (sqrt(rv[i]) / sqrt(bc2) + eps);
        }
        free(g), free(gf);
    }
    CHECK_ERR(rel_err(p, rp, n), 1e-14, "adamw f64 after 10 steps");
    CHECK_ERR(rel_err(m, rm, n), 1e-14, "adamw f64 m");
    CHECK_ERR(rel_err(v, rv, n), 1e-14, "adamw f64 v");
    CHECK_ERR(rel_err_f32(pf, rp, n), F32_TOL, "adamw f32 after 10 steps");
    free(p), free(m), free(v), free(rp), free(rm), free(rv), free(pf), free(mf), free(vf);
}

/* --- in place and stability ----------------------------------------------------------- */

static void test_in_place(void) {
    gd_rng rng = test_rng(50);
    size_t B = 2, T = 9, H = 3, hd = 10, n = B * T * H * hd, half = hd / 2;
    double *x = random_normal(&rng, n, 1), *y = dalloc(n), *cs = dalloc(T * half);
    double *sn = dalloc(T * half);
    gd_cpu_rope_tables_f64(cs, sn, T, hd, 10000);
    gd_cpu_rope_forward_f64(NULL, y, x, cs, sn, B, T, H, hd);
    gd_cpu_rope_forward_f64(NULL, x, x, cs, sn, B, T, H, hd);
    CHECK(memcmp(x, y, n * sizeof *x) == 0);
    float *xf = det_random(&rng, n, 1), *yf = falloc(n), *csf = falloc(T * half);
    float *snf = falloc(T * half);
    gd_cpu_rope_tables_f32(csf, snf, T, hd, 10000);
    gd_cpu_rope_forward_f32(NULL, yf, xf, csf, snf, B, T, H, hd);
    gd_cpu_rope_forward_f32(NULL, xf, xf, csf, snf, B, T, H, hd);
    CHECK(memcmp(xf, yf, n * sizeof *xf) == 0);

    size_t rows = 7, vocab = 33;
    int32_t *targets = random_tokens(&rng, rows, vocab);
    float *logits = det_random(&rng, rows * vocab, 3), *dlogits = falloc(rows * vocab);
    gd_cpu_cross_entropy_backward_f32(NULL, dlogits, logits, targets, 0.5, rows, vocab);
    gd_cpu_cross_entropy_backward_f32(NULL, logits, logits, targets, 0.5, rows, vocab);
    CHECK(memcmp(logits, dlogits, rows * vocab * sizeof(float)) == 0);
    free(x), free(y), free(cs), free(sn), free(xf), free(yf), free(csf), free(snf);
    free(targets), free(logits), free(dlogits);
}

/* Huge logits and gates must not overflow in float: cross entropy depends
 * only on differences of logits, and silu tends to 0 and x. */
static void test_stability(void) {
    float logits[6] = {1000, 998, 995, -1000, -1003, -1001}, losses[2], dl[6];
    int32_t targets[2] = {1, 2};
    gd_cpu_cross_entropy_forward_f32(NULL, losses, logits, targets, 2, 3);
    double l0 = log(1 + exp(2.0) + exp(-3.0)), l1 = log(exp(-2.0) + exp(1.0) + 1);
    CHECK_ERR(fabs(losses[0] - l0), 1e-6, "cross entropy at 1000");
    CHECK_ERR(fabs(losses[1] - l1), 1e-6, "cross entropy at -1000");
    gd_cpu_cross_entropy_backward_f32(NULL, dl, logits, targets, 1, 2, 3);
    double row_sum = 0;
    for (int i = 0; i < 6; i++) {
        CHECK(isfinite(dl[i]));
        row_sum += dl[i];
    }
    CHECK_ERR(fabs(row_sum), 1e-6, "cross entropy gradient sums to zero");

    float gate[4] = {-200, -90, 90, 200}, up[4] = {1, 1, 1, 1}, out[4], dg[4] = {0}, du[4] = {0};
    gd_cpu_swiglu_forward_f32(NULL, out, gate, up, 4);
    gd_cpu_swiglu_backward_f32(NULL, dg, du, up, gate, up, 4);
    CHECK(out[0] == 0 && fabsf(out[1]) < 1e-30f && out[2] == 90 && out[3] == 200);
    CHECK(dg[0] == 0 && dg[3] == 1 && isfinite(dg[1]) && isfinite(dg[2]));
    CHECK(du[0] == 0 && du[3] == 200);
}

int main(void) {
    gd_cpu_ops_init();
    gd_cpu_ops_init(); /* idempotent */
    RUN_TEST(test_grad_embedding);
    RUN_TEST(test_grad_rmsnorm);
    RUN_TEST(test_grad_matmul);
    RUN_TEST(test_grad_rope);
    RUN_TEST(test_grad_attention);
    RUN_TEST(test_grad_flash_attention);
    RUN_TEST(test_flash_matches_naive);
    RUN_TEST(test_grad_swiglu);
    RUN_TEST(test_grad_cross_entropy);
    RUN_TEST(test_forward_reference);
    RUN_TEST(test_f32_matches_f64);
    RUN_TEST(test_thread_determinism);
    RUN_TEST(test_sum_squares_threads);
    RUN_TEST(test_adamw_one_step);
    RUN_TEST(test_adamw_steps);
    RUN_TEST(test_in_place);
    RUN_TEST(test_stability);
    return gd_test_finish();
}
