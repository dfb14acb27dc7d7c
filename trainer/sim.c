/* The single-machine DiLoCo simulation (see trainer/sim.h). */
#include "trainer/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/file.h"
#include "common/hash.h"
#include "proofs/diloco_rules.h"
#include "trainer/verify.h"


typedef struct gd_sim {
    const gd_sim_options *o;
    gd_diloco_config c;    /* o->diloco */
    gd_data *data;
    gd_data *eval_data;    /* o->eval_data_spec's source, or NULL */
    const gd_data *eval;   /* what evaluations read: eval_data, else data */
    gd_trainer *trainer;
    size_t n;
    float *initial;        /* G_0's parameters, for the baselines */
    float *initial_m, *initial_v; /* the AdamW moments every method starts with */
    uint64_t start_step;   /* inner steps before round 0 (the warm start) */
    gd_global_state g;
    gd_worker_state *workers;
    float **starts;        /* overlap: each worker's next start state */
    float **decoded;       /* this round's decoded contributions */
    gd_worker_round *results;
    /* the validator's memory (--verify) */
    uint32_t *ranks;                 /* what the chain assigned at join: worker w joined w-th */
    gd_worker_round *prev_results;   /* each worker's previous round */
    gd_prev_link *prev;              /* each worker's link to its previous round */
    bool *has_prev;
    uint8_t (*prev_roots)[GD_MMR_HASH_LEN];
    gd_global_state g_prev;          /* overlap: G at the start of the previous round */
    uint8_t zero_root[GD_MMR_HASH_LEN]; /* n zeros: every first round's moments */
    gd_global_desc g_start;          /* G_r's descriptor and hash */
    uint8_t g_start_hash[GD_MMR_HASH_LEN];
    /* the timelines */
    double sync_end;                 /* synchronous: end of the last exchange */
    double ov_compute_end, ov_comm_end, ov_comm_end_prev;
    double compute_total;            /* worker-seconds of training */
} gd_sim;

/* Tells the watcher, if any, where a phase stands. */
static void gd_sim_tell(const gd_sim_options *o, gd_sim_phase phase, uint32_t round,
                        uint64_t done, uint64_t total) {
    if (o->watch == NULL || o->watch->fn == NULL)
        return;
    gd_sim_phase_progress p = {phase, round, done, total};
    o->watch->fn(o->watch->ctx, &p);
}

static double gd_speed(const gd_sim_options *o, uint32_t w) {
    return o->speeds ? o->speeds[w] : 1.0;
}

/* Seconds to move `bytes` over the link (0 for an infinite link). */
static double gd_link_seconds(const gd_sim_options *o, double bytes) {
    return o->link_mbps > 0 ? bytes * 8.0 / (o->link_mbps * 1e6) : 0.0;
}

static void gd_sim_free(gd_sim *s) {
    uint32_t W = s->o->diloco.workers;
    for (uint32_t w = 0; s->workers && w < W; w++)
        gd_worker_state_free(&s->workers[w]);
    for (uint32_t w = 0; s->starts && w < W; w++)
        free(s->starts[w]);
    for (uint32_t w = 0; s->decoded && w < W; w++)
        free(s->decoded[w]);
    for (uint32_t w = 0; s->results && w < W; w++)
        gd_worker_round_free(&s->results[w]);
    for (uint32_t w = 0; s->prev_results && w < W; w++)
        gd_worker_round_free(&s->prev_results[w]);
    free(s->prev_results);
    free(s->ranks);
    free(s->prev);
    free(s->has_prev);
    free(s->prev_roots);
    gd_global_state_free(&s->g_prev);
    free(s->workers);
    free(s->starts);
    free(s->decoded);
    free(s->results);
    free(s->initial);
    free(s->initial_m);
    free(s->initial_v);
    gd_global_state_free(&s->g);
    gd_trainer_free(s->trainer);
    gd_data_close(s->data);
    gd_data_close(s->eval_data);
}

/* The synchronous data-parallel trainer: a global batch of W x batch whose
 * micro-batches are the workers' batches, over the whole schedule. */
static gd_status gd_sim_ddp_trainer(const gd_sim_options *o, gd_trainer **out) {
    const gd_diloco_config *c = &o->diloco;
    gd_train_options opt = c->inner;
    opt.batch = c->inner.batch * c->workers;
    opt.micro_batch = c->inner.micro_batch;
    opt.data_workers = c->workers;
    return gd_trainer_new_ranks(out, &o->model, &opt, o->threads, &o->ranks);
}

/* The shared start: warm_start synchronous steps from the seed's weights. */
static gd_status gd_sim_warm_start(gd_sim *s) {
    gd_trainer *t = NULL;
    GD_TRY(gd_sim_ddp_trainer(s->o, &t));
    gd_status st = GD_OK;
    uint32_t n = s->o->warm_start;
    gd_sim_tell(s->o, GD_SIM_PHASE_WARM_START, 0, 0, n);
    for (uint32_t k = 0; st == GD_OK && k < n; k++) {
        st = gd_trainer_step(t, s->data, NULL);
        gd_sim_tell(s->o, GD_SIM_PHASE_WARM_START, 0, k + 1, n);
    }
    if (st == GD_OK)
        gd_trainer_get_state(t, s->initial, s->initial_m, s->initial_v, &s->start_step);
    gd_trainer_free(t);
    return st;
}

static gd_status gd_sim_setup(gd_sim *s, const gd_sim_options *o) {
    memset(s, 0, sizeof *s);
    s->o = o;
    s->c = o->diloco;
    const gd_diloco_config *c = &s->c;
    GD_TRY(gd_diloco_config_validate(c, &o->model));
    if (o->rounds < 1 || o->eval_batches < 1)
        return gd_fail(GD_ERR_INVALID, "the simulation needs at least one round and one "
                                       "evaluation batch");
    for (uint32_t w = 0; o->speeds && w < c->workers; w++)
        if (!(o->speeds[w] >= GD_SIM_SPEED_MIN && o->speeds[w] <= GD_SIM_SPEED_MAX))
            return gd_fail(GD_ERR_INVALID, "worker %u's speed %g must be in [%g, %g]", w,
                           o->speeds[w], GD_SIM_SPEED_MIN, GD_SIM_SPEED_MAX);
    if (!(o->link_mbps >= 0) || !(o->rtt_ms >= 0))
        return gd_fail(GD_ERR_INVALID, "link speed and round-trip time must be >= 0");
    /* Made now, so a directory that cannot be does not cost a round. */
    if (o->payload_dir != NULL)
        GD_TRY(gd_dir_create(o->payload_dir, 0755));
    GD_TRY(gd_data_open(&s->data, o->data_spec));
    if (o->eval_data_spec != NULL) {
        gd_status st = gd_data_open(&s->eval_data, o->eval_data_spec);
        if (st != GD_OK)
            return gd_fail_context(st, "evaluation data '%s'", o->eval_data_spec);
    }
    s->eval = s->eval_data != NULL ? s->eval_data : s->data;
    gd_train_options inner = c->inner;
    s->trainer = NULL;
    GD_TRY(gd_trainer_new_ranks(&s->trainer, &o->model, &inner, o->threads, &o->ranks));
    s->n = gd_trainer_layout(s->trainer)->total;
    /* Before any training: an evaluation source that does not suit the
     * model would otherwise fail only after the first round. */
    gd_status fit = gd_data_eval_check(s->eval, c->inner.batch, c->inner.seq_len,
                                       o->model.vocab_size);
    if (fit != GD_OK)
        return gd_fail_context(fit, "evaluation data '%s'",
                               o->eval_data_spec ? o->eval_data_spec : o->data_spec);
    uint32_t W = c->workers;
    s->initial = malloc(s->n * sizeof(float));
    s->initial_m = calloc(s->n, sizeof(float));
    s->initial_v = calloc(s->n, sizeof(float));
    s->workers = calloc(W, sizeof *s->workers);
    s->starts = calloc(W, sizeof *s->starts);
    s->decoded = calloc(W, sizeof *s->decoded);
    s->results = calloc(W, sizeof *s->results);
    s->prev_results = calloc(W, sizeof *s->prev_results);
    s->ranks = calloc(W, sizeof *s->ranks);
    s->prev = calloc(W, sizeof *s->prev);
    s->has_prev = calloc(W, sizeof *s->has_prev);
    s->prev_roots = calloc(W, sizeof *s->prev_roots);
    if (!s->initial || !s->initial_m || !s->initial_v || !s->workers || !s->starts ||
        !s->decoded || !s->results || !s->prev_results || !s->ranks || !s->prev ||
        !s->has_prev || !s->prev_roots)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_trainer_get_state(s->trainer, s->initial, NULL, NULL, NULL);
    if (o->warm_start > 0)
        GD_TRY(gd_sim_warm_start(s));
    GD_TRY(gd_global_state_init(&s->g, s->n));
    memcpy(s->g.params, s->initial, s->n * sizeof(float));
    if (o->verify)
        GD_TRY(gd_zero_values_root(gd_trainer_pool(s->trainer), s->n, c->chunk_elems,
                                   s->zero_root));
    for (uint32_t w = 0; w < W; w++) {
        GD_TRY(gd_worker_state_init(&s->workers[w], w, s->n));
        gd_worker_state *ws = &s->workers[w];
        memcpy(ws->exp_avg, s->initial_m, s->n * sizeof(float));
        memcpy(ws->exp_avg_sq, s->initial_v, s->n * sizeof(float));
        ws->step = s->start_step;
        s->starts[w] = malloc(s->n * sizeof(float));
        s->decoded[w] = malloc(s->n * sizeof(float));
        if (!s->starts[w] || !s->decoded[w])
            return gd_fail(GD_ERR_NOMEM, "out of memory");
        memcpy(s->starts[w], s->initial, s->n * sizeof(float));
        s->ranks[w] = w;
        if (o->verify && o->warm_start > 0) {
            /* The shared warm start is the run's initial optimizer state. */
            gd_state_tag tag;
            gd_diloco_state_tag(c, gd_trainer_layout(s->trainer), &tag);
            s->has_prev[w] = true;
            s->prev[w].initial = true;
            GD_TRY(gd_worker_state_describe(gd_trainer_pool(s->trainer), &tag,
                                            &s->prev[w].post.desc, 0, GD_STAGE_ENCODED, ws));
        }
    }
    return GD_OK;
}

/* The check of worker w's round r, drawn by the module's rule
 * (proofs/diloco_rules.h) from randomness the worker could not know when it
 * trained: here SHA-256("gd-sim-check" || LE64 run || LE64 round), on a
 * chain the round's verify randomness. */
static gd_diloco_check_draw gd_sim_draw(const gd_sim *s, uint32_t r, uint32_t w) {
    uint8_t in[12 + 16], randomness[GD_DILOCO_HASH_LEN];
    memcpy(in, "gd-sim-check", 12);
    gd_put_le64(in + 12, s->c.run);
    gd_put_le64(in + 20, r);
    gd_sha256(randomness, in, sizeof in);
    gd_diloco_check_draw d;
    gd_diloco_draw_check(&d, randomness, s->workers[w].address, 0,
                         s->c.inner_steps / s->c.segment_steps, s->c.segment_steps,
                         gd_values_chunks(s->n, s->c.chunk_elems), 0);
    return d;
}

/* The chain's view of worker w's commitment of round r. */
static gd_commitment_view gd_sim_commitment(const gd_sim *s, uint32_t r, uint32_t w,
                                            const gd_worker_round *res,
                                            const uint8_t *start_hash) {
    uint32_t segments = s->c.inner_steps / s->c.segment_steps;
    return (gd_commitment_view){.round = r, .address = s->workers[w].address,
                                .rank = s->ranks[w], .segments = segments,
                                .transcript_root = res->transcript_root,
                                .payload_root = res->payload_root,
                                .payload_leaves = res->payload_leaves,
                                .start_state_hash = start_hash};
}

static gd_status gd_sim_check_result(const gd_check_result *res, uint32_t r, const char *who,
                                     const char *what) {
    if (!res->pass)
        return gd_fail(GD_ERR_INVALID, "round %u, %s: the %s check failed: %s", r, who, what,
                       res->why);
    return GD_OK;
}

/* S_r's chunk `chunk` as a validator derives it: G_r's, or with overlap
 * G_{r-1} - Δ̂_{w,r-1}; then leaf 0's chunk is checked against it. */
static gd_status gd_sim_start_chunk(gd_sim *s, float *out, uint32_t r,
                                    uint32_t w, const gd_commitment_view *cv,
                                    const gd_prev_link *prev, const gd_leaf_evidence *start,
                                    const float *leaf0_params, uint32_t chunk) {
    const gd_diloco_config *c = &s->c;
    size_t lo = 0, count = 0;
    (void)gd_values_chunk_range(s->n, c->chunk_elems, chunk, &lo, &count);
    if (!gd_diloco_start_by_chunk(c, cv, prev)) {
        memcpy(out, s->g.params + lo, count * sizeof(float));
        return GD_OK;
    }
    const gd_worker_round *before = &s->prev_results[w];
    const gd_payload_chunk *pc = &before->payload.chunks[chunk];
    gd_mmr_proof proof, leaf_proof;
    bool ok = false;
    GD_TRY(gd_payload_prove_chunk(&before->payload, &proof, chunk));
    GD_TRY(gd_diloco_overlap_start(c, out, s->n, chunk, s->g_prev.params + lo, before->payload_root,
                                   before->payload_leaves, pc->raw, pc->raw_len, &proof, &ok));
    if (!ok)
        return gd_fail(GD_ERR_INVALID, "round %u, %s: the previous payload chunk %u does not "
                                       "verify",
                       r, s->workers[w].address, chunk);
    GD_TRY(gd_values_prove(gd_trainer_pool(s->trainer), leaf0_params, s->n, c->chunk_elems, chunk,
                           &leaf_proof));
    gd_check_result res;
    GD_TRY(gd_diloco_check_start_chunk(s->n, cv, start, chunk, leaf0_params + lo, &leaf_proof,
                                       out, &res));
    return gd_sim_check_result(&res, r, s->workers[w].address, "start chunk");
}

/* A validator checks worker w's round r as docs/verification.md says: the
 * links, one drawn payload chunk (and with overlap the same chunk of the
 * start), one drawn segment re-executed. Everything an honest simulation
 * produces must pass. */
static gd_status gd_sim_verify(gd_sim *s, uint32_t r, uint32_t w,
                               const gd_worker_state *segment_starts,
                               const gd_worker_round *res) {
    const gd_diloco_config *c = &s->c;
    gd_pool *pool = gd_trainer_pool(s->trainer);
    const char *who = s->workers[w].address;
    uint32_t segments = c->inner_steps / c->segment_steps;
    gd_commitment_view cv = gd_sim_commitment(s, r, w, res, s->g_start_hash);
    gd_leaf_evidence start, final, post;
    GD_TRY(gd_worker_round_leaf(res, &start, 0));
    GD_TRY(gd_worker_round_leaf(res, &final, segments));
    GD_TRY(gd_worker_round_leaf(res, &post, segments + 1));
    const gd_prev_link *prev = s->has_prev[w] ? &s->prev[w] : NULL;
    gd_check_result check;
    GD_TRY(gd_diloco_check_links(pool, c, gd_trainer_layout(s->trainer)->digest, s->n, &cv,
                                 &s->g_start, prev, s->zero_root, &start, &final, &post,
                                 &check));
    GD_TRY(gd_sim_check_result(&check, r, who, "links"));

    gd_diloco_check_draw draw = gd_sim_draw(s, r, w);
    uint32_t chunk = draw.chunk;
    float *start_values = malloc((size_t)c->chunk_elems * sizeof(float));
    if (start_values == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_chunk_evidence ev;
    gd_status st = gd_sim_start_chunk(s, start_values, r, w, &cv, prev, &start,
                                      segment_starts[0].params, chunk);
    if (st == GD_OK)
        st = gd_worker_round_chunk(pool, c, res, &s->workers[w], &ev, segment_starts[0].residual,
                                   chunk);
    if (st == GD_OK)
        st = gd_diloco_check_payload_chunk(c, s->n, &cv, &final, &post, &ev, start_values,
                                           &check);
    free(start_values);
    GD_TRY(st);
    GD_TRY(gd_sim_check_result(&check, r, who, "payload chunk"));

    uint32_t seg = draw.segment;
    gd_leaf_evidence a, b;
    GD_TRY(gd_worker_round_leaf(res, &a, seg));
    GD_TRY(gd_worker_round_leaf(res, &b, seg + 1));
    gd_segment_claim claim = {.cv = &cv, .segment = seg,
                              .first_step = start.desc.step,
                              .residual_root = start.desc.residual_root,
                              .start = gd_worker_state_source_of(&segment_starts[seg]),
                              .start_proof = &a.proof, .end_leaf = res->leaves[seg + 1],
                              .end_proof = &b.proof};
    GD_TRY(gd_diloco_verify_segment(s->trainer, c, s->data, &claim, &check));
    GD_TRY(gd_sim_check_result(&check, r, who, "segment"));
    /* This round's last leaf is the next round's link. */
    s->has_prev[w] = true;
    s->prev[w] = (gd_prev_link){.round = r, .segments = segments, .post = post};
    memcpy(s->prev_roots[w], res->transcript_root, GD_MMR_HASH_LEN);
    s->prev[w].transcript_root = s->prev_roots[w];
    return GD_OK;
}

/* One worker's round, its payload through the wire form, and its check. */
static gd_status gd_sim_worker(gd_sim *s, uint32_t r, uint32_t w, uint64_t *wire_bytes) {
    const gd_sim_options *o = s->o;
    const gd_diloco_config *c = &s->c;
    const float *start = c->overlap ? s->starts[w] : s->g.params;
    uint32_t segments = c->inner_steps / c->segment_steps;
    gd_worker_state *seg = o->verify ? calloc(segments, sizeof *seg) : NULL;
    if (o->verify && seg == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    /* The previous round's results stay for the overlap start check. */
    gd_worker_round_free(&s->prev_results[w]);
    s->prev_results[w] = s->results[w];
    memset(&s->results[w], 0, sizeof s->results[w]);
    gd_worker_round *res = &s->results[w];
    gd_status st = gd_diloco_worker_round(s->trainer, c, s->data, res, r, start, s->n,
                                          &s->workers[w], seg);
    /* The wire: what a peer downloads, parses, checks against the
     * committed root and decodes. */
    gd_buf wire = {0};
    gd_payload parsed = {0};
    if (st == GD_OK)
        st = gd_payload_serialize(&res->payload, &wire);
    if (st == GD_OK)
        st = gd_payload_parse(&parsed, wire.data, wire.len, gd_trainer_pool(s->trainer));
    if (st == GD_OK)
        st = gd_payload_header_matches(&parsed.header, &res->payload.header);
    uint8_t root[GD_MMR_HASH_LEN];
    uint32_t leaves = 0;
    if (st == GD_OK)
        st = gd_payload_root(&parsed, root, &leaves);
    if (st == GD_OK && (memcmp(root, res->payload_root, GD_MMR_HASH_LEN) != 0 ||
                        leaves != res->payload_leaves))
        st = gd_fail(GD_ERR_INVALID, "the downloaded payload of %s does not match its "
                                     "commitment",
                     s->workers[w].address);
    if (st == GD_OK)
        st = gd_payload_decode(&parsed, s->decoded[w], gd_trainer_pool(s->trainer));
    if (st == GD_OK && o->payload_dir != NULL) {
        char path[4096];
        int len = snprintf(path, sizeof path, "%s/r%04u-%s.gdpl", o->payload_dir, (unsigned)r,
                           s->workers[w].address);
        st = len > 0 && (size_t)len < sizeof path
                 ? gd_payload_write(&res->payload, path)
                 : gd_fail(GD_ERR_INVALID, "payload directory path too long");
    }
    *wire_bytes = wire.len;
    gd_payload_free(&parsed);
    gd_buf_free(&wire);
    if (st == GD_OK && o->verify)
        st = gd_sim_verify(s, r, w, seg, res);
    for (uint32_t k = 0; seg && k < segments; k++)
        gd_worker_state_free(&seg[k]);
    free(seg);
    return st;
}

/* Advances both timelines by one round of compute c_r and exchange m_r. */
static void gd_sim_timelines(gd_sim *s, double compute, double comm) {
    s->sync_end += compute + comm;
    /* overlap: compute r starts once compute r-1 and exchange r-2 are done */
    double start = s->ov_compute_end > s->ov_comm_end_prev ? s->ov_compute_end
                                                             : s->ov_comm_end_prev;
    s->ov_compute_end = start + compute;
    double comm_start = s->ov_compute_end > s->ov_comm_end ? s->ov_compute_end : s->ov_comm_end;
    s->ov_comm_end_prev = s->ov_comm_end;
    s->ov_comm_end = comm_start + comm;
}

static gd_status gd_sim_round(gd_sim *s, uint32_t r, gd_sim_round_report *rep) {
    const gd_sim_options *o = s->o;
    const gd_diloco_config *c = &s->c;
    uint32_t W = c->workers;
    /* A round is W worker rounds and one evaluation. */
    uint64_t unit = (uint64_t)r * (W + 1), units = (uint64_t)o->rounds * (W + 1);
    memset(rep, 0, sizeof *rep);
    rep->round = r;
    rep->payload_roots = malloc((size_t)W * GD_MMR_HASH_LEN);
    if (rep->payload_roots == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    double slowest = 0, loss = 0, total_bytes = 0;
    uint64_t *bytes = calloc(W, sizeof *bytes);
    gd_contribution *contribs = calloc(W, sizeof *contribs);
    gd_status st = bytes && contribs ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    const uint8_t *layout_digest = gd_trainer_layout(s->trainer)->digest;
    if (st == GD_OK && o->verify) {
        /* G_r as the chain attests it: what every leaf 0 must start from. */
        st = gd_global_state_describe(gd_trainer_pool(s->trainer), &s->g_start, layout_digest,
                                      c->chunk_elems, &s->g);
        gd_global_desc_hash(&s->g_start, s->g_start_hash);
    }
    for (uint32_t w = 0; st == GD_OK && w < W; w++) {
        gd_sim_tell(o, GD_SIM_PHASE_ROUNDS, r, unit + w, units);
        st = gd_sim_worker(s, r, w, &bytes[w]);
        if (st != GD_OK)
            break;
        const gd_worker_round *res = &s->results[w];
        memcpy(rep->payload_roots + (size_t)w * GD_MMR_HASH_LEN, res->payload_root,
               GD_MMR_HASH_LEN);
        loss += res->loss_sum / res->steps;
        double cw = res->seconds / gd_speed(o, w);
        slowest = cw > slowest ? cw : slowest;
        s->compute_total += cw;
        total_bytes += (double)bytes[w];
        contribs[w] = (gd_contribution){.address = s->workers[w].address, .n = s->n,
                                        .layout_digest = layout_digest,
                                        .delta = s->decoded[w], .tokens = res->tokens};
    }
    if (st == GD_OK && o->verify && c->overlap) {
        /* Round r + 1's validators derive its starts from this G_r. */
        gd_global_state_free(&s->g_prev);
        st = gd_global_state_copy(&s->g_prev, &s->g);
    }
    if (st == GD_OK && c->overlap) {
        /* Each worker's next start: the newest global state it has (G
         * before this round's aggregation) plus its own decoded progress. */
        for (uint32_t w = 0; w < W; w++)
            for (size_t i = 0; i < s->n; i++)
                s->starts[w][i] = s->g.params[i] - s->decoded[w][i];
    }
    gd_aggregate_stats agg = {0};
    if (st == GD_OK)
        st = gd_diloco_aggregate(gd_trainer_backend(s->trainer), c, layout_digest, contribs, W,
                                 &s->g, &agg);
    uint64_t tokens = 0;
    if (st == GD_OK) {
        const gd_train_options *in = &c->inner;
        gd_sim_tell(o, GD_SIM_PHASE_ROUNDS, r, unit + W, units);
        st = gd_evaluate(gd_trainer_layout(s->trainer), s->g.params, s->eval, o->eval_batches,
                         in->batch, in->seq_len, in->micro_batch, gd_trainer_pool(s->trainer),
                         &rep->eval_loss, &tokens);
        if (st == GD_OK && tokens == 0)
            st = gd_fail(GD_ERR_INVALID, "the data has no evaluation batch");
    }
    if (st == GD_OK) {
        double sent = total_bytes / W, received = total_bytes - sent;
        rep->inner_loss = loss / W;
        rep->bytes_sent = (uint64_t)llround(sent);
        rep->bytes_received = (uint64_t)llround(received);
        rep->clipped = agg.clipped;
        rep->verified = o->verify ? W : 0;
        double up = 0, down = 0;
        for (uint32_t w = 0; w < W; w++) {
            up = (double)bytes[w] > up ? (double)bytes[w] : up;
            double d = total_bytes - (double)bytes[w];
            down = d > down ? d : down;
        }
        double comm = o->rtt_ms / 1e3 + gd_link_seconds(o, up > down ? up : down);
        gd_sim_timelines(s, slowest, comm);
        rep->wall_seconds = c->overlap ? s->ov_comm_end : s->sync_end;
    }
    free(bytes);
    free(contribs);
    return st;
}

/* DDP: the synchronous trainer continues from the shared start for the
 * same R x H steps. */
static gd_status gd_sim_ddp(gd_sim *s, gd_sim_report *rep) {
    const gd_sim_options *o = s->o;
    const gd_diloco_config *c = &s->c;
    uint32_t W = c->workers;
    uint64_t steps = (uint64_t)o->rounds * c->inner_steps;
    gd_trainer *t = NULL;
    GD_TRY(gd_sim_ddp_trainer(o, &t));
    gd_trainer_set_state(t, s->initial, s->initial_m, s->initial_v, s->start_step);
    double slowest_speed = 1e300;
    for (uint32_t w = 0; w < W; w++)
        slowest_speed = gd_speed(o, w) < slowest_speed ? gd_speed(o, w) : slowest_speed;
    double bytes_step = 2.0 * (W - 1) / W * 4.0 * (double)s->n;
    double allreduce = 2.0 * (W - 1) * (o->rtt_ms / 2e3) + gd_link_seconds(o, bytes_step);
    gd_status st = GD_OK;
    double compute = 0;
    gd_sim_tell(o, GD_SIM_PHASE_DDP, 0, 0, steps + 1);
    for (uint64_t k = 0; st == GD_OK && k < steps; k++) {
        double t0 = gd_clock_seconds();
        st = gd_trainer_step(t, s->data, NULL);
        compute += (gd_clock_seconds() - t0) / W / slowest_speed;
        gd_sim_tell(o, GD_SIM_PHASE_DDP, 0, k + 1, steps + 1);
    }
    uint64_t tokens = 0;
    if (st == GD_OK)
        st = gd_trainer_evaluate(t, s->eval, o->eval_batches, c->inner.batch, c->inner.seq_len,
                                 c->inner.micro_batch, &rep->ddp_eval, &tokens, NULL, NULL);
    if (st == GD_OK) {
        gd_sim_tell(o, GD_SIM_PHASE_DDP, 0, steps + 1, steps + 1);
        rep->has_ddp = true;
        rep->ddp_bytes = (uint64_t)llround(bytes_step * (double)steps);
        rep->ddp_wall = compute + allreduce * (double)steps;
        rep->ddp_utilization = rep->ddp_wall > 0 ? compute / rep->ddp_wall : 1;
    }
    gd_trainer_free(t);
    return st;
}

/* No communication: every worker trains R x H steps from G_0 on its own
 * data; the parameters are averaged once at the end (worker order, float). */
static gd_status gd_sim_local(gd_sim *s, gd_sim_report *rep) {
    const gd_sim_options *o = s->o;
    const gd_diloco_config *c = &s->c;
    uint32_t W = c->workers;
    uint64_t steps = (uint64_t)o->rounds * c->inner_steps;
    float *avg = calloc(s->n, sizeof(float)), *params = malloc(s->n * sizeof(float));
    gd_status st = avg && params ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    float inv = 1.0f / (float)W;
    uint64_t units = (uint64_t)W * steps + 1;
    gd_sim_tell(o, GD_SIM_PHASE_LOCAL, 0, 0, units);
    for (uint32_t w = 0; st == GD_OK && w < W; w++) {
        gd_train_options opt = c->inner;
        opt.worker = w;
        st = gd_trainer_reconfigure(s->trainer, &opt);
        if (st == GD_OK)
            gd_trainer_set_state(s->trainer, s->initial, s->initial_m, s->initial_v,
                                 s->start_step);
        for (uint64_t k = 0; st == GD_OK && k < steps; k++) {
            st = gd_trainer_step(s->trainer, s->data, NULL);
            gd_sim_tell(o, GD_SIM_PHASE_LOCAL, 0, w * steps + k + 1, units);
        }
        if (st == GD_OK) {
            gd_trainer_get_state(s->trainer, params, NULL, NULL, NULL);
            for (size_t i = 0; i < s->n; i++)
                avg[i] = avg[i] + params[i] * inv;
        }
    }
    uint64_t tokens = 0;
    if (st == GD_OK)
        st = gd_evaluate(gd_trainer_layout(s->trainer), avg, s->eval, o->eval_batches,
                         c->inner.batch, c->inner.seq_len, c->inner.micro_batch,
                         gd_trainer_pool(s->trainer), &rep->local_eval, &tokens);
    if (st == GD_OK) {
        rep->has_local = true;
        gd_sim_tell(o, GD_SIM_PHASE_LOCAL, 0, units, units);
    }
    free(avg);
    free(params);
    return st;
}

static void gd_sim_summary(gd_sim *s, gd_sim_report *rep) {
    const gd_sim_options *o = s->o;
    uint32_t W = o->diloco.workers;
    rep->params = s->n;
    rep->diloco_eval = rep->rounds[rep->n_rounds - 1].eval_loss;
    rep->diloco_bytes = 0;
    for (uint32_t r = 0; r < rep->n_rounds; r++)
        rep->diloco_bytes += rep->rounds[r].bytes_sent + rep->rounds[r].bytes_received;
    rep->wall_sync = s->sync_end;
    rep->wall_overlap = s->ov_comm_end;
    double work = s->compute_total / W; /* average worker's training seconds */
    rep->utilization_sync = rep->wall_sync > 0 ? work / rep->wall_sync : 1;
    rep->utilization_overlap = rep->wall_overlap > 0 ? work / rep->wall_overlap : 1;
    rep->diloco_wall = o->diloco.overlap ? rep->wall_overlap : rep->wall_sync;
    rep->utilization = o->diloco.overlap ? rep->utilization_overlap : rep->utilization_sync;
    double h[8];
    size_t nh = gd_data_markov_entropies(s->eval, h, 8);
    rep->entropy_floor = nh ? h[nh - 1] : NAN;
    rep->loss_ratio = NAN;
    rep->byte_reduction = NAN;
    if (rep->has_ddp) {
        double floor = isnan(rep->entropy_floor) ? 0 : rep->entropy_floor;
        rep->loss_ratio = (rep->diloco_eval - floor) / (rep->ddp_eval - floor);
        rep->byte_reduction = (double)rep->ddp_bytes / (double)rep->diloco_bytes;
    }
}

gd_status gd_sim_run(const gd_sim_options *o, gd_sim_report *rep, gd_sim_progress_fn progress,
                     void *ctx) {
    memset(rep, 0, sizeof *rep);
    gd_sim s;
    gd_status st = gd_sim_setup(&s, o);
    if (st == GD_OK) {
        rep->rounds = calloc(o->rounds, sizeof *rep->rounds);
        rep->rounds_capacity = rep->rounds ? o->rounds : 0;
        if (rep->rounds == NULL)
            st = gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    if (st == GD_OK) {
        rep->workers = o->diloco.workers;
        rep->addresses = calloc(rep->workers, sizeof *rep->addresses);
        if (rep->addresses == NULL)
            st = gd_fail(GD_ERR_NOMEM, "out of memory");
        for (uint32_t w = 0; st == GD_OK && w < rep->workers; w++)
            memcpy(rep->addresses[w], s.workers[w].address, sizeof rep->addresses[w]);
    }
    uint64_t tokens = 0;
    if (st == GD_OK) {
        gd_sim_tell(o, GD_SIM_PHASE_START_EVAL, 0, 0, 1);
        st = gd_evaluate(gd_trainer_layout(s.trainer), s.initial, s.eval, o->eval_batches,
                         s.c.inner.batch, s.c.inner.seq_len, s.c.inner.micro_batch,
                         gd_trainer_pool(s.trainer), &rep->start_eval, &tokens);
    }
    if (st == GD_OK)
        gd_sim_tell(o, GD_SIM_PHASE_START_EVAL, 0, 1, 1);
    for (uint32_t r = 0; st == GD_OK && r < o->rounds; r++) {
        st = gd_sim_round(&s, r, &rep->rounds[r]);
        if (st == GD_OK) {
            rep->n_rounds = r + 1;
            rep->verified_segments += rep->rounds[r].verified;
            if (progress)
                progress(ctx, &rep->rounds[r]);
            /* After the round's line: the phase's end comes last. */
            uint64_t per = (uint64_t)o->diloco.workers + 1;
            gd_sim_tell(o, GD_SIM_PHASE_ROUNDS, r, (r + 1) * per, o->rounds * per);
        }
    }
    if (st == GD_OK && o->ddp)
        st = gd_sim_ddp(&s, rep);
    if (st == GD_OK && o->local)
        st = gd_sim_local(&s, rep);
    if (st == GD_OK)
        gd_sim_summary(&s, rep);
    gd_sim_free(&s);
    if (st != GD_OK)
        gd_sim_report_free(rep);
    return st;
}

void gd_sim_report_free(gd_sim_report *r) {
    /* A failed round may hold its roots without being counted. */
    for (uint32_t i = 0; r->rounds && i < r->rounds_capacity; i++)
        free(r->rounds[i].payload_roots);
    free(r->addresses);
    r->addresses = NULL;
    free(r->rounds);
    r->rounds = NULL;
    r->n_rounds = 0;
    r->rounds_capacity = 0;
}
