/* The model passes, written once over GD_REAL and GD_OP(name) and compiled
 * twice (trainer/model_f32.c, trainer/model_f64.c): float trains, double
 * backs the whole-model finite-difference gradient check, and both run the
 * very same sequence of ops.
 *
 * One layer (N = rows * seq_len token rows, C hidden, F intermediate):
 *
 *   ln1  = RMSNorm(x)                      x: the residual stream (N, C)
 *   q, k = RoPE(ln1 Wq^T), RoPE(ln1 Wk^T)
 *   v    = ln1 Wv^T
 *   y    = CausalAttention(q, k, v)        grouped-query heads
 *   xmid = x + y Wo^T
 *   ln2  = RMSNorm(xmid)
 *   h    = silu(ln2 Wgate^T) * (ln2 Wup^T)
 *   x'   = xmid + h Wdown^T
 *
 * then logits = RMSNorm(x_L) Wlm^T and the cross-entropy against the next
 * tokens. Every activation the backward pass needs is kept per layer. */

/* The including file includes trainer/model.h, kernels/cpu/ops.h and the C
 * headers first (they undefine GD_REAL and GD_OP), then defines the two
 * macros and includes this file. */

struct GD_OP(gd_model) {
    const gd_param_layout *layout;
    gd_pool *pool;
    size_t cap_rows, seq_len, rows;
    size_t C, F, V, L, heads, kv_heads, head_dim, q_dim, kv_dim;
    double eps;
    size_t bytes;
    GD_REAL *cos_table, *sin_table; /* (seq_len, head_dim / 2) */
    int32_t *inputs, *targets;      /* (N) */

    /* Saved activations; per-layer arrays are strided by their full-capacity
     * size. x holds L + 1 residual streams: the embeddings, then each
     * layer's output. */
    GD_REAL *x;                 /* (L + 1, N, C) */
    GD_REAL *ln1, *ln2, *xmid;  /* (L, N, C) */
    GD_REAL *rstd1, *rstd2;     /* (L, N) */
    GD_REAL *q, *y;             /* (L, N, q_dim) */
    GD_REAL *k, *v;             /* (L, N, kv_dim) */
    GD_REAL *att;               /* (L, rows, heads, T, T) */
    GD_REAL *gate, *up, *h;     /* (L, N, F) */
    GD_REAL *lnf, *rstdf;       /* (N, C), (N) */
    GD_REAL *logits;            /* (N, V); the backward pass turns it into dlogits */
    GD_REAL *losses;            /* (N) */
    GD_REAL *proj;              /* (N, C) scratch: a projection before its residual add */

    /* Backward scratch, reused by every layer. */
    GD_REAL *dx, *dln;              /* (N, C) */
    GD_REAL *dq, *dq_pre, *dy;      /* (N, q_dim) */
    GD_REAL *dk, *dk_pre, *dv;      /* (N, kv_dim) */
    GD_REAL *dgate, *dup, *dh;      /* (N, F) */
    GD_REAL *datt;                  /* (rows, heads, T, T) */
};

/* Allocates count elements of GD_REAL, zeroed, checking the size for
 * overflow; records the bytes. */
static GD_REAL *GD_OP(gd_model_alloc)(GD_OP(gd_model) *m, size_t count, bool *failed) {
    if (*failed)
        return NULL;
    if (count > SIZE_MAX / sizeof(GD_REAL)) {
        *failed = true;
        return NULL;
    }
    GD_REAL *p = calloc(count ? count : 1, sizeof(GD_REAL));
    if (p == NULL)
        *failed = true;
    m->bytes += count * sizeof(GD_REAL);
    return p;
}

/* a * b * c without overflow, or SIZE_MAX. */
static size_t GD_OP(gd_mul3)(size_t a, size_t b, size_t c) {
    if (a && b > SIZE_MAX / a)
        return SIZE_MAX;
    size_t ab = a * b;
    if (ab && c > SIZE_MAX / ab)
        return SIZE_MAX;
    return ab * c;
}

gd_status GD_OP(gd_model_create)(GD_OP(gd_model) **out, const gd_param_layout *layout,
                                 size_t batch, size_t seq_len, gd_pool *pool) {
    const gd_model_config *c = &layout->config;
    if (batch == 0 || seq_len == 0)
        return gd_fail(GD_ERR_INVALID, "batch and sequence length must be at least 1");
    if (seq_len > c->max_position_embeddings)
        return gd_fail(GD_ERR_INVALID, "sequence length %zu exceeds the model's "
                                       "max_position_embeddings %u",
                       seq_len, c->max_position_embeddings);
    gd_cpu_ops_init();
    GD_OP(gd_model) *m = calloc(1, sizeof *m);
    if (m == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    m->layout = layout;
    m->pool = pool;
    m->cap_rows = batch;
    m->seq_len = seq_len;
    m->C = c->hidden_size;
    m->F = c->intermediate_size;
    m->V = c->vocab_size;
    m->L = c->num_hidden_layers;
    m->heads = c->num_attention_heads;
    m->kv_heads = c->num_key_value_heads;
    m->head_dim = gd_model_head_dim(c);
    m->q_dim = m->heads * m->head_dim;
    m->kv_dim = m->kv_heads * m->head_dim;
    m->eps = c->rms_norm_eps;

    size_t N = GD_OP(gd_mul3)(batch, seq_len, 1), L = m->L;
    size_t att_layer = GD_OP(gd_mul3)(batch * m->heads, seq_len, seq_len);
    bool failed = N == SIZE_MAX || att_layer == SIZE_MAX;
    m->cos_table = GD_OP(gd_model_alloc)(m, seq_len * m->head_dim / 2, &failed);
    m->sin_table = GD_OP(gd_model_alloc)(m, seq_len * m->head_dim / 2, &failed);
    m->inputs = failed ? NULL : calloc(N, sizeof *m->inputs);
    m->targets = failed ? NULL : calloc(N, sizeof *m->targets);
    failed = failed || m->inputs == NULL || m->targets == NULL;
    m->x = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L + 1, N, m->C), &failed);
    m->ln1 = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->C), &failed);
    m->ln2 = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->C), &failed);
    m->xmid = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->C), &failed);
    m->rstd1 = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, 1), &failed);
    m->rstd2 = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, 1), &failed);
    m->q = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->q_dim), &failed);
    m->y = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->q_dim), &failed);
    m->k = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->kv_dim), &failed);
    m->v = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->kv_dim), &failed);
    m->att = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, att_layer, 1), &failed);
    m->gate = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->F), &failed);
    m->up = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->F), &failed);
    m->h = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(L, N, m->F), &failed);
    m->lnf = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->C, 1), &failed);
    m->rstdf = GD_OP(gd_model_alloc)(m, N, &failed);
    m->logits = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->V, 1), &failed);
    m->losses = GD_OP(gd_model_alloc)(m, N, &failed);
    m->proj = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->C, 1), &failed);
    m->dx = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->C, 1), &failed);
    m->dln = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->C, 1), &failed);
    m->dq = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->q_dim, 1), &failed);
    m->dq_pre = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->q_dim, 1), &failed);
    m->dy = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->q_dim, 1), &failed);
    m->dk = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->kv_dim, 1), &failed);
    m->dk_pre = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->kv_dim, 1), &failed);
    m->dv = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->kv_dim, 1), &failed);
    m->dgate = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->F, 1), &failed);
    m->dup = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->F, 1), &failed);
    m->dh = GD_OP(gd_model_alloc)(m, GD_OP(gd_mul3)(N, m->F, 1), &failed);
    m->datt = GD_OP(gd_model_alloc)(m, att_layer, &failed);
    if (failed) {
        size_t mib = m->bytes >> 20;
        GD_OP(gd_model_destroy)(m);
        return gd_fail(GD_ERR_NOMEM, "cannot allocate activations for batch %zu x sequence %zu "
                                     "(%zu MiB and more); use a smaller --batch or --seq, or "
                                     "--micro-batch",
                       batch, seq_len, mib);
    }
    GD_OP(gd_cpu_rope_tables)(m->cos_table, m->sin_table, seq_len, m->head_dim, c->rope_theta);
    *out = m;
    return GD_OK;
}

void GD_OP(gd_model_destroy)(GD_OP(gd_model) *m) {
    if (m == NULL)
        return;
    void *buffers[] = {m->cos_table, m->sin_table, m->inputs, m->targets, m->x, m->ln1, m->ln2,
                       m->xmid, m->rstd1, m->rstd2, m->q, m->y, m->k, m->v, m->att, m->gate,
                       m->up, m->h, m->lnf, m->rstdf, m->logits, m->losses, m->proj, m->dx,
                       m->dln, m->dq, m->dq_pre, m->dy, m->dk, m->dk_pre, m->dv, m->dgate,
                       m->dup, m->dh, m->datt};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        free(buffers[i]);
    free(m);
}

size_t GD_OP(gd_model_activation_bytes)(const GD_OP(gd_model) *m) {
    return m->bytes;
}

const GD_REAL *GD_OP(gd_model_losses)(const GD_OP(gd_model) *m) {
    return m->losses;
}

gd_status GD_OP(gd_model_forward)(GD_OP(gd_model) *m, const GD_REAL *params,
                                  const int32_t *tokens, size_t rows, double *loss_sum) {
    if (rows == 0 || rows > m->cap_rows)
        return gd_fail(GD_ERR_INVALID, "forward on %zu rows; the model holds 1..%zu", rows,
                       m->cap_rows);
    size_t T = m->seq_len, N = rows * T, C = m->C, F = m->F;
    for (size_t r = 0; r < rows; r++) {
        const int32_t *w = tokens + r * (T + 1);
        for (size_t t = 0; t <= T; t++) {
            if (w[t] < 0 || (uint64_t)w[t] >= m->V)
                return gd_fail(GD_ERR_INVALID, "token %d at row %zu, position %zu is outside "
                                               "the model's vocabulary of %zu",
                               (int)w[t], r, t, m->V);
        }
        memcpy(m->inputs + r * T, w, T * sizeof *w);
        memcpy(m->targets + r * T, w + 1, T * sizeof *w);
    }
    m->rows = rows;
    const gd_param_layout *lay = m->layout;
    gd_pool *pool = m->pool;
    size_t att_layer = m->cap_rows * m->heads * T * T;

    GD_OP(gd_cpu_embedding_forward)(pool, m->x, m->inputs, params + lay->embed, N, C);
    for (size_t l = 0; l < m->L; l++) {
        const gd_layer_params *p = &lay->layers[l];
        const GD_REAL *x = m->x + l * N * C;
        GD_REAL *x_next = m->x + (l + 1) * N * C;
        GD_REAL *ln1 = m->ln1 + l * N * C, *ln2 = m->ln2 + l * N * C;
        GD_REAL *xmid = m->xmid + l * N * C;
        GD_REAL *q = m->q + l * N * m->q_dim, *y = m->y + l * N * m->q_dim;
        GD_REAL *k = m->k + l * N * m->kv_dim, *v = m->v + l * N * m->kv_dim;
        GD_REAL *gate = m->gate + l * N * F, *up = m->up + l * N * F, *h = m->h + l * N * F;

        GD_OP(gd_cpu_rmsnorm_forward)(pool, ln1, m->rstd1 + l * N, x, params + p->input_norm,
                                      N, C, m->eps);
        GD_OP(gd_cpu_matmul_forward)(pool, q, ln1, params + p->q, N, C, m->q_dim);
        GD_OP(gd_cpu_rope_forward)(pool, q, q, m->cos_table, m->sin_table, rows, T, m->heads,
                                   m->head_dim);
        GD_OP(gd_cpu_matmul_forward)(pool, k, ln1, params + p->k, N, C, m->kv_dim);
        GD_OP(gd_cpu_rope_forward)(pool, k, k, m->cos_table, m->sin_table, rows, T,
                                   m->kv_heads, m->head_dim);
        GD_OP(gd_cpu_matmul_forward)(pool, v, ln1, params + p->v, N, C, m->kv_dim);
        GD_OP(gd_cpu_attention_forward)(pool, y, m->att + l * att_layer, q, k, v, rows, T,
                                        m->heads, m->kv_heads, m->head_dim);
        GD_OP(gd_cpu_matmul_forward)(pool, m->proj, y, params + p->o, N, m->q_dim, C);
        GD_OP(gd_cpu_add)(pool, xmid, x, m->proj, N * C);

        GD_OP(gd_cpu_rmsnorm_forward)(pool, ln2, m->rstd2 + l * N, xmid, params + p->post_norm,
                                      N, C, m->eps);
        GD_OP(gd_cpu_matmul_forward)(pool, gate, ln2, params + p->gate, N, C, F);
        GD_OP(gd_cpu_matmul_forward)(pool, up, ln2, params + p->up, N, C, F);
        GD_OP(gd_cpu_swiglu_forward)(pool, h, gate, up, N * F);
        GD_OP(gd_cpu_matmul_forward)(pool, m->proj, h, params + p->down, N, F, C);
        GD_OP(gd_cpu_add)(pool, x_next, xmid, m->proj, N * C);
    }
    GD_OP(gd_cpu_rmsnorm_forward)(pool, m->lnf, m->rstdf, m->x + m->L * N * C,
                                  params + lay->final_norm, N, C, m->eps);
    GD_OP(gd_cpu_matmul_forward)(pool, m->logits, m->lnf, params + lay->lm_head, N, C, m->V);
    GD_OP(gd_cpu_cross_entropy_forward)(pool, m->losses, m->logits, m->targets, N, m->V);
    double sum = 0;
    for (size_t i = 0; i < N; i++)
        sum += (double)m->losses[i];
    *loss_sum = sum;
    return GD_OK;
}

void GD_OP(gd_model_backward)(GD_OP(gd_model) *m, const GD_REAL *params, GD_REAL *grads,
                              double dloss) {
    size_t rows = m->rows, T = m->seq_len, N = rows * T, C = m->C, F = m->F;
    const gd_param_layout *lay = m->layout;
    gd_pool *pool = m->pool;
    size_t att_layer = m->cap_rows * m->heads * T * T;

    /* Logits -> dlogits in place; then the head and the final norm. dx
     * carries the residual stream's gradient down through the layers. */
    GD_OP(gd_cpu_cross_entropy_backward)(pool, m->logits, m->logits, m->targets, dloss, N,
                                         m->V);
    memset(m->dln, 0, N * C * sizeof(GD_REAL));
    GD_OP(gd_cpu_matmul_backward)(pool, m->dln, grads + lay->lm_head, m->logits, m->lnf,
                                  params + lay->lm_head, N, C, m->V);
    memset(m->dx, 0, N * C * sizeof(GD_REAL));
    GD_OP(gd_cpu_rmsnorm_backward)(pool, m->dx, grads + lay->final_norm, m->dln,
                                   m->x + m->L * N * C, params + lay->final_norm, m->rstdf, N,
                                   C);

    for (size_t l = m->L; l-- > 0;) {
        const gd_layer_params *p = &lay->layers[l];
        const GD_REAL *x = m->x + l * N * C;
        const GD_REAL *ln1 = m->ln1 + l * N * C, *ln2 = m->ln2 + l * N * C;
        const GD_REAL *xmid = m->xmid + l * N * C;
        const GD_REAL *q = m->q + l * N * m->q_dim, *y = m->y + l * N * m->q_dim;
        const GD_REAL *k = m->k + l * N * m->kv_dim, *v = m->v + l * N * m->kv_dim;
        const GD_REAL *gate = m->gate + l * N * F, *up = m->up + l * N * F;
        const GD_REAL *h = m->h + l * N * F;

        /* x' = xmid + h Wdown^T: dx flows on unchanged to xmid. */
        memset(m->dh, 0, N * F * sizeof(GD_REAL));
        GD_OP(gd_cpu_matmul_backward)(pool, m->dh, grads + p->down, m->dx, h, params + p->down,
                                      N, F, C);
        memset(m->dgate, 0, N * F * sizeof(GD_REAL));
        memset(m->dup, 0, N * F * sizeof(GD_REAL));
        GD_OP(gd_cpu_swiglu_backward)(pool, m->dgate, m->dup, m->dh, gate, up, N * F);
        memset(m->dln, 0, N * C * sizeof(GD_REAL));
        GD_OP(gd_cpu_matmul_backward)(pool, m->dln, grads + p->gate, m->dgate, ln2,
                                      params + p->gate, N, C, F);
        GD_OP(gd_cpu_matmul_backward)(pool, m->dln, grads + p->up, m->dup, ln2, params + p->up,
                                      N, C, F);
        GD_OP(gd_cpu_rmsnorm_backward)(pool, m->dx, grads + p->post_norm, m->dln, xmid,
                                       params + p->post_norm, m->rstd2 + l * N, N, C);

        /* xmid = x + y Wo^T: dx (now d xmid) flows on unchanged to x. */
        memset(m->dy, 0, N * m->q_dim * sizeof(GD_REAL));
        GD_OP(gd_cpu_matmul_backward)(pool, m->dy, grads + p->o, m->dx, y, params + p->o, N,
                                      m->q_dim, C);
        memset(m->dq, 0, N * m->q_dim * sizeof(GD_REAL));
        memset(m->dk, 0, N * m->kv_dim * sizeof(GD_REAL));
        memset(m->dv, 0, N * m->kv_dim * sizeof(GD_REAL));
        GD_OP(gd_cpu_attention_backward)(pool, m->dq, m->dk, m->dv, m->datt, m->dy,
                                         m->att + l * att_layer, q, k, v, rows, T, m->heads,
                                         m->kv_heads, m->head_dim);
        memset(m->dq_pre, 0, N * m->q_dim * sizeof(GD_REAL));
        memset(m->dk_pre, 0, N * m->kv_dim * sizeof(GD_REAL));
        GD_OP(gd_cpu_rope_backward)(pool, m->dq_pre, m->dq, m->cos_table, m->sin_table, rows, T,
                                    m->heads, m->head_dim);
        GD_OP(gd_cpu_rope_backward)(pool, m->dk_pre, m->dk, m->cos_table, m->sin_table, rows, T,
                                    m->kv_heads, m->head_dim);
        memset(m->dln, 0, N * C * sizeof(GD_REAL));
        GD_OP(gd_cpu_matmul_backward)(pool, m->dln, grads + p->q, m->dq_pre, ln1, params + p->q,
                                      N, C, m->q_dim);
        GD_OP(gd_cpu_matmul_backward)(pool, m->dln, grads + p->k, m->dk_pre, ln1, params + p->k,
                                      N, C, m->kv_dim);
        GD_OP(gd_cpu_matmul_backward)(pool, m->dln, grads + p->v, m->dv, ln1, params + p->v, N,
                                      C, m->kv_dim);
        GD_OP(gd_cpu_rmsnorm_backward)(pool, m->dx, grads + p->input_norm, m->dln, x,
                                       params + p->input_norm, m->rstd1 + l * N, N, C);
    }
    GD_OP(gd_cpu_embedding_backward)(pool, grads + lay->embed, m->dx, m->inputs, N, C);
}
