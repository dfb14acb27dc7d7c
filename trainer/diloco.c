/* The DiLoCo round engine (see trainer/diloco.h and docs/protocol.md). */
#include "trainer/diloco.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/ops.h"
#include "proofs/state_hash.h"

#define GD_WORKER_STATE_MAGIC "GDWS"
#define GD_GLOBAL_STATE_MAGIC "GDGS"
#define GD_STATE_VERSION 1
#define GD_WORKER_STATE_HEADER 104
#define GD_GLOBAL_STATE_HEADER 32
/* Elementwise work of the aggregation, per task: fixed, so results never
 * depend on the thread count. */
#define GD_AGG_TASK_ELEMS ((size_t)1 << 16)

void gd_diloco_config_default(gd_diloco_config *c) {
    memset(c, 0, sizeof *c);
    c->run = 1;
    c->workers = 4;
    c->inner_steps = 50;
    c->segment_steps = 10;
    gd_train_options_default(&c->inner);
    c->outer_lr = 0.7;
    c->outer_momentum = 0.9;
    c->codec = (gd_codec){.kind = GD_CODEC_INT8};
    c->error_feedback = true;
    c->error_feedback_decay = 1.0;
    c->clip_factor = 2.0;
    c->overlap = false;
    c->chunk_elems = GD_PAYLOAD_CHUNK_ELEMS;
}

gd_status gd_diloco_config_validate(const gd_diloco_config *c, const gd_model_config *model) {
    if (c->workers < 1 || c->workers > 4096)
        return gd_fail(GD_ERR_INVALID, "workers %u must be 1..4096", c->workers);
    if (c->inner_steps < 1 || c->inner_steps > 1000000)
        return gd_fail(GD_ERR_INVALID, "inner steps %u must be 1..1000000", c->inner_steps);
    if (c->segment_steps < 1 || c->inner_steps % c->segment_steps != 0)
        return gd_fail(GD_ERR_INVALID, "segment length %u must divide the inner steps %u",
                       c->segment_steps, c->inner_steps);
    if (!(c->outer_lr > 0 && c->outer_lr <= 10))
        return gd_fail(GD_ERR_INVALID, "outer learning rate %g must be in (0, 10]", c->outer_lr);
    if (!(c->outer_momentum >= 0 && c->outer_momentum < 1))
        return gd_fail(GD_ERR_INVALID, "outer momentum %g must be in [0, 1)", c->outer_momentum);
    if (!(c->clip_factor == 0 || (c->clip_factor >= 1 && c->clip_factor <= 1000)))
        return gd_fail(GD_ERR_INVALID, "clip factor %g must be 0 (off) or in [1, 1000]",
                       c->clip_factor);
    if (!(c->error_feedback_decay >= 0 && c->error_feedback_decay <= 1))
        return gd_fail(GD_ERR_INVALID, "error-feedback decay %g must be in [0, 1]",
                       c->error_feedback_decay);
    if (c->chunk_elems < 1 || c->chunk_elems > ((uint32_t)1 << 28))
        return gd_fail(GD_ERR_INVALID, "payload chunk size %u must be 1..2^28", c->chunk_elems);
    return gd_train_options_validate(&c->inner, model);
}

/* --- states ------------------------------------------------------------------------- */

gd_status gd_worker_state_init(gd_worker_state *w, uint32_t rank, size_t n) {
    memset(w, 0, sizeof *w);
    w->rank = rank;
    w->n = n;
    snprintf(w->address, sizeof w->address, "worker-%05u", rank);
    w->params = calloc(n, sizeof(float));
    w->exp_avg = calloc(n, sizeof(float));
    w->exp_avg_sq = calloc(n, sizeof(float));
    w->residual = calloc(n, sizeof(float));
    if (!w->params || !w->exp_avg || !w->exp_avg_sq || !w->residual) {
        gd_worker_state_free(w);
        return gd_fail(GD_ERR_NOMEM, "out of memory for a worker state of %zu parameters", n);
    }
    return GD_OK;
}

gd_status gd_worker_state_copy(gd_worker_state *dst, const gd_worker_state *src) {
    GD_TRY(gd_worker_state_init(dst, src->rank, src->n));
    size_t bytes = src->n * sizeof(float);
    memcpy(dst->address, src->address, sizeof dst->address);
    memcpy(dst->params, src->params, bytes);
    memcpy(dst->exp_avg, src->exp_avg, bytes);
    memcpy(dst->exp_avg_sq, src->exp_avg_sq, bytes);
    memcpy(dst->residual, src->residual, bytes);
    dst->step = src->step;
    return GD_OK;
}

void gd_worker_state_free(gd_worker_state *w) {
    free(w->params);
    free(w->exp_avg);
    free(w->exp_avg_sq);
    free(w->residual);
    w->params = w->exp_avg = w->exp_avg_sq = w->residual = NULL;
}

gd_status gd_global_state_init(gd_global_state *g, size_t n) {
    memset(g, 0, sizeof *g);
    g->n = n;
    g->params = calloc(n, sizeof(float));
    g->momentum = calloc(n, sizeof(float));
    if (!g->params || !g->momentum) {
        gd_global_state_free(g);
        return gd_fail(GD_ERR_NOMEM, "out of memory for the global state");
    }
    return GD_OK;
}

void gd_global_state_free(gd_global_state *g) {
    free(g->params);
    free(g->momentum);
    g->params = g->momentum = NULL;
}

gd_status gd_worker_state_hash(gd_pool *pool, uint64_t run, uint64_t round,
                               const gd_worker_state *w, uint8_t out[GD_MMR_HASH_LEN]) {
    /* magic, version, run, round, address (64, NUL-padded), step, n; then
     * params, exp_avg, exp_avg_sq, residual as little-endian float32. */
    uint8_t header[GD_WORKER_STATE_HEADER] = {0};
    memcpy(header, GD_WORKER_STATE_MAGIC, 4);
    gd_put_le32(header + 4, GD_STATE_VERSION);
    gd_put_le64(header + 8, run);
    gd_put_le64(header + 16, round);
    memcpy(header + 24, w->address, strnlen(w->address, GD_PAYLOAD_PARTICIPANT_MAX));
    gd_put_le64(header + 88, w->step);
    gd_put_le64(header + 96, w->n);
    size_t bytes = w->n * sizeof(float);
    gd_bytes_part parts[5] = {{header, sizeof header},
                              {w->params, bytes},
                              {w->exp_avg, bytes},
                              {w->exp_avg_sq, bytes},
                              {w->residual, bytes}};
    return gd_state_hash(pool, parts, 5, GD_STATE_CHUNK_BYTES, out, NULL);
}

gd_status gd_global_state_hash(gd_pool *pool, uint64_t run, const gd_global_state *g,
                               uint8_t out[GD_MMR_HASH_LEN]) {
    uint8_t header[GD_GLOBAL_STATE_HEADER] = {0};
    memcpy(header, GD_GLOBAL_STATE_MAGIC, 4);
    gd_put_le32(header + 4, GD_STATE_VERSION);
    gd_put_le64(header + 8, run);
    gd_put_le64(header + 16, g->round);
    gd_put_le64(header + 24, g->n);
    size_t bytes = g->n * sizeof(float);
    gd_bytes_part parts[3] = {{header, sizeof header}, {g->params, bytes}, {g->momentum, bytes}};
    return gd_state_hash(pool, parts, 3, GD_STATE_CHUNK_BYTES, out, NULL);
}

/* --- a worker's round ------------------------------------------------------------------- */

void gd_worker_round_free(gd_worker_round *r) {
    free(r->leaves);
    free(r->delta);
    gd_payload_free(&r->payload);
    memset(r, 0, sizeof *r);
}

static double gd_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The trainer's options for worker w. */
static gd_status gd_use_worker(gd_trainer *t, const gd_diloco_config *c, uint32_t rank) {
    gd_train_options o = c->inner;
    o.worker = rank;
    return gd_trainer_reconfigure(t, &o);
}

/* Moves the trainer's state into w and hashes it as transcript leaf. */
static gd_status gd_record_leaf(gd_trainer *t, const gd_diloco_config *c, uint64_t round,
                                gd_worker_state *w, uint8_t leaf[GD_MMR_HASH_LEN]) {
    gd_trainer_get_state(t, w->params, w->exp_avg, w->exp_avg_sq, &w->step);
    return gd_worker_state_hash(gd_trainer_pool(t), c->run, round, w, leaf);
}

/* Δ = start - θ, encoded with (or without) error feedback. */
static gd_status gd_encode_delta(gd_trainer *t, const gd_diloco_config *c, uint64_t round,
                                 const float *start, gd_worker_state *w, float *delta,
                                 gd_payload *payload) {
    size_t n = w->n;
    for (size_t i = 0; i < n; i++)
        delta[i] = start[i] - w->params[i];
    gd_payload_header h = {.run = c->run, .round = round, .param_count = n,
                           .codec = c->codec, .chunk_elems = c->chunk_elems};
    snprintf(h.participant, sizeof h.participant, "%s", w->address);
    memcpy(h.layout_digest, gd_trainer_layout(t)->digest, 32);
    if (c->error_feedback && c->error_feedback_decay != 1.0) {
        float decay = (float)c->error_feedback_decay;
        for (size_t i = 0; i < n; i++)
            w->residual[i] = decay * w->residual[i];
    }
    return gd_payload_encode(payload, &h, delta, c->error_feedback ? w->residual : NULL,
                             gd_trainer_pool(t));
}

gd_status gd_diloco_worker_round(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                 uint64_t round, const float *start, gd_worker_state *w,
                                 gd_worker_state *segment_starts, gd_worker_round *out) {
    memset(out, 0, sizeof *out);
    uint32_t segments = c->inner_steps / c->segment_steps;
    out->n_leaves = segments + 1;
    out->leaves = calloc(out->n_leaves, GD_MMR_HASH_LEN);
    out->delta = malloc(w->n * sizeof(float));
    if (out->leaves == NULL || out->delta == NULL) {
        gd_worker_round_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    gd_status s = gd_use_worker(t, c, w->rank);
    if (s == GD_OK)
        gd_trainer_set_state(t, start, w->exp_avg, w->exp_avg_sq, w->step);
    double t0 = gd_now(), hashing = 0;
    for (uint32_t seg = 0; s == GD_OK && seg <= segments; seg++) {
        double h0 = gd_now();
        s = gd_record_leaf(t, c, round, w, out->leaves[seg]);
        hashing += gd_now() - h0;
        if (s != GD_OK || seg == segments)
            break;
        if (segment_starts != NULL)
            s = gd_worker_state_copy(&segment_starts[seg], w);
        for (uint32_t k = 0; s == GD_OK && k < c->segment_steps; k++) {
            gd_step_stats st;
            s = gd_trainer_step(t, data, &st);
            out->loss_sum += st.loss;
            out->steps++;
            out->tokens += st.tokens;
        }
    }
    out->seconds = gd_now() - t0 - hashing;
    gd_mmr mmr;
    gd_mmr_init(&mmr);
    for (uint32_t i = 0; s == GD_OK && i < out->n_leaves; i++) {
        uint8_t leaf[GD_MMR_HASH_LEN];
        gd_mmr_hash_leaf(leaf, i, out->leaves[i], GD_MMR_HASH_LEN);
        s = gd_mmr_append(&mmr, leaf);
    }
    if (s == GD_OK)
        s = gd_mmr_root(&mmr, out->transcript_root);
    gd_mmr_free(&mmr);
    if (s == GD_OK)
        s = gd_encode_delta(t, c, round, start, w, out->delta, &out->payload);
    if (s == GD_OK)
        s = gd_payload_root(&out->payload, out->payload_root, &out->payload_leaves);
    if (s != GD_OK) {
        gd_worker_round_free(out);
        return gd_fail_context(s, "%s, round %llu", w->address, (unsigned long long)round);
    }
    return GD_OK;
}

/* --- aggregation -------------------------------------------------------------------------- */

typedef struct gd_agg_job {
    const gd_contribution *const *ordered;
    const float *weights;
    size_t n_contribs;
    size_t n;
    float *avg;
    gd_global_state *g;
    float lr, mu;
} gd_agg_job;

/* avg = sum_i w_i * Δ_i in address order, then the outer step:
 *   buf = mu * buf + avg;  d = avg + mu * buf;  p = p - lr * d
 * (PyTorch's SGD with nesterov=True and dampening 0). Each statement is
 * one rounded float operation in a fixed order. */
static void gd_agg_task(void *arg, size_t task) {
    const gd_agg_job *job = arg;
    size_t lo = task * GD_AGG_TASK_ELEMS;
    size_t hi = lo + GD_AGG_TASK_ELEMS < job->n ? lo + GD_AGG_TASK_ELEMS : job->n;
    for (size_t j = lo; j < hi; j++) {
        float acc = 0.0f;
        for (size_t i = 0; i < job->n_contribs; i++) {
            float term = job->weights[i] * job->ordered[i]->delta[j];
            acc = acc + term;
        }
        job->avg[j] = acc;
        float scaled_buf = job->mu * job->g->momentum[j];
        float buf = scaled_buf + acc;
        job->g->momentum[j] = buf;
        float nesterov = job->mu * buf;
        float d = acc + nesterov;
        float step = job->lr * d;
        job->g->params[j] = job->g->params[j] - step;
    }
}

static int gd_cmp_contrib(const void *a, const void *b) {
    const gd_contribution *x = *(const gd_contribution *const *)a;
    const gd_contribution *y = *(const gd_contribution *const *)b;
    return strcmp(x->address, y->address);
}

static int gd_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

gd_status gd_diloco_aggregate(gd_pool *pool, const gd_diloco_config *c,
                              const gd_contribution *contribs, size_t n_contribs,
                              gd_global_state *g, gd_aggregate_stats *stats) {
    if (n_contribs == 0)
        return gd_fail(GD_ERR_INVALID, "no contributions to aggregate");
    const gd_contribution **ordered = calloc(n_contribs, sizeof *ordered);
    double *norms = calloc(n_contribs, sizeof *norms), *sorted = calloc(n_contribs, sizeof *sorted);
    float *weights = calloc(n_contribs, sizeof *weights);
    float *avg = malloc(g->n * sizeof(float));
    gd_status s = ordered && norms && sorted && weights && avg
                      ? GD_OK
                      : gd_fail(GD_ERR_NOMEM, "out of memory");
    double total_tokens = 0;
    for (size_t i = 0; s == GD_OK && i < n_contribs; i++) {
        ordered[i] = &contribs[i];
        total_tokens += (double)contribs[i].tokens;
        if (contribs[i].tokens == 0)
            s = gd_fail(GD_ERR_INVALID, "contribution of %s has no tokens", contribs[i].address);
    }
    if (s == GD_OK) {
        qsort(ordered, n_contribs, sizeof *ordered, gd_cmp_contrib);
        for (size_t i = 1; s == GD_OK && i < n_contribs; i++)
            if (strcmp(ordered[i - 1]->address, ordered[i]->address) == 0)
                s = gd_fail(GD_ERR_INVALID, "two contributions from %s", ordered[i]->address);
    }
    gd_aggregate_stats st = {0};
    if (s == GD_OK) {
        for (size_t i = 0; i < n_contribs; i++) {
            norms[i] = sqrt(gd_cpu_sum_squares_f32(pool, ordered[i]->delta, g->n));
            sorted[i] = norms[i];
            if (!isfinite(norms[i]))
                s = gd_fail(GD_ERR_INVALID, "contribution of %s is not finite",
                            ordered[i]->address);
        }
    }
    if (s == GD_OK) {
        qsort(sorted, n_contribs, sizeof *sorted, gd_cmp_double);
        size_t mid = n_contribs / 2;
        st.median_norm = n_contribs % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
        st.max_norm = sorted[n_contribs - 1];
        double limit = c->clip_factor * st.median_norm;
        /* Each weight is computed in double and rounded to float once:
         * clip * tokens / total. */
        for (size_t i = 0; i < n_contribs; i++) {
            double clip = 1.0;
            if (c->clip_factor > 0 && norms[i] > limit) {
                clip = limit / norms[i];
                st.clipped++;
            }
            weights[i] = (float)(clip * (double)ordered[i]->tokens / total_tokens);
        }
        gd_agg_job job = {ordered, weights, n_contribs, g->n, avg, g,
                          (float)c->outer_lr, (float)c->outer_momentum};
        gd_pool_run(pool, (g->n + GD_AGG_TASK_ELEMS - 1) / GD_AGG_TASK_ELEMS, gd_agg_task, &job);
        g->round++;
    }
    if (stats)
        *stats = st;
    free(ordered);
    free(norms);
    free(sorted);
    free(weights);
    free(avg);
    return s;
}

/* --- validation ------------------------------------------------------------------------ */

static bool gd_fail_check(char *why, size_t cap, const char *text) {
    if (why && cap)
        snprintf(why, cap, "%s", text);
    return false;
}

gd_status gd_diloco_verify_segment(gd_trainer *t, const gd_diloco_config *c,
                                   const gd_data *data, const gd_segment_claim *claim,
                                   bool *pass, char *why, size_t why_cap) {
    *pass = false;
    uint32_t segments = c->inner_steps / c->segment_steps;
    if (claim->segment >= segments)
        return gd_fail(GD_ERR_INVALID, "segment %u of a round of %u", claim->segment, segments);
    bool last = claim->segment + 1 == segments;
    if (last && (claim->round_start == NULL || claim->payload_root == NULL))
        return gd_fail(GD_ERR_INVALID, "the last segment needs the round's start and the "
                                       "committed payload root");
    gd_pool *pool = gd_trainer_pool(t);
    uint8_t leaf[GD_MMR_HASH_LEN];
    GD_TRY(gd_worker_state_hash(pool, c->run, claim->round, claim->start, leaf));
    if (memcmp(leaf, claim->start_leaf, GD_MMR_HASH_LEN) != 0) {
        gd_fail_check(why, why_cap, "the start state does not match its transcript leaf");
        return GD_OK;
    }
    gd_worker_state w;
    GD_TRY(gd_worker_state_copy(&w, claim->start));
    gd_status s = gd_use_worker(t, c, w.rank);
    if (s == GD_OK)
        gd_trainer_set_state(t, w.params, w.exp_avg, w.exp_avg_sq, w.step);
    for (uint32_t k = 0; s == GD_OK && k < c->segment_steps; k++)
        s = gd_trainer_step(t, data, NULL);
    if (s == GD_OK)
        s = gd_record_leaf(t, c, claim->round, &w, leaf);
    bool ok = s == GD_OK;
    if (ok && memcmp(leaf, claim->end_leaf, GD_MMR_HASH_LEN) != 0)
        ok = gd_fail_check(why, why_cap, "re-executing the segment does not reach the next "
                                         "transcript leaf");
    if (ok && last) {
        float *delta = malloc(w.n * sizeof(float));
        gd_payload payload = {0};
        uint8_t root[GD_MMR_HASH_LEN];
        uint32_t leaves = 0;
        s = delta ? gd_encode_delta(t, c, claim->round, claim->round_start, &w, delta, &payload)
                  : gd_fail(GD_ERR_NOMEM, "out of memory");
        if (s == GD_OK)
            s = gd_payload_root(&payload, root, &leaves);
        ok = s == GD_OK;
        if (ok && memcmp(root, claim->payload_root, GD_MMR_HASH_LEN) != 0)
            ok = gd_fail_check(why, why_cap, "the re-encoded pseudo-gradient does not match "
                                             "the committed payload root");
        gd_payload_free(&payload);
        free(delta);
    }
    gd_worker_state_free(&w);
    GD_TRY(s);
    *pass = ok;
    if (ok && why && why_cap)
        why[0] = '\0';
    return GD_OK;
}
