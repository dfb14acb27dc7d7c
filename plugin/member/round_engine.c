/* The round engine (plugin/member/round_engine.h): the trainer's round, checks
 * and aggregation, driven from what the chain records. */
#include "plugin/member/round_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "trainer/diloco_impl.h"
#include "trainer/init.h"

gd_status gd_engine_open(gd_engine *e, const Gonka__Diloco__V1__RunSpec *spec, uint64_t run,
                         const gd_engine_host *host) {
    memset(e, 0, sizeof *e);
    GD_TRY(gd_run_config_from_spec(&e->rc, spec, run, NULL));
    if (snprintf(e->data_spec, sizeof e->data_spec, "%s", e->rc.data_spec) >=
        (int)sizeof e->data_spec)
        return gd_fail(GD_ERR_LIMIT, "run spec: data_spec is over %zu bytes",
                       sizeof e->data_spec - 1);
    e->rc.data_spec = e->data_spec;
    gd_status s = gd_backend_group_open(&e->backends, host->backend ? host->backend : "cpu",
                                        host->gpus ? host->gpus : 1, NULL);
    if (s == GD_OK)
        s = gd_trainer_new_ranks(&e->trainer, &e->rc.model, &e->rc.diloco.inner,
                                 host->threads,
                                 &(gd_trainer_host){e->backends.ranks, e->backends.n,
                                                    &e->backends.coll, host->memory});
    if (s == GD_OK)
        s = gd_run_config_open_data(&e->rc, &e->data, host->data_paths, host->n_data_paths,
                                    gd_trainer_pool(e->trainer), host->data_memo);
    if (s == GD_OK) {
        const gd_param_layout *layout = gd_trainer_layout(e->trainer);
        e->n = layout->total;
        e->chunks = gd_values_chunks(e->n, e->rc.diloco.chunk_elems);
        gd_diloco_state_tag(&e->rc.diloco, layout, &e->tag);
        s = gd_zero_values_root(gd_trainer_pool(e->trainer), e->n, e->rc.diloco.chunk_elems,
                                e->zero_root);
    }
    if (s != GD_OK)
        gd_engine_close(e);
    return s;
}

void gd_engine_close(gd_engine *e) {
    if (e->trainer)
        gd_trainer_free(e->trainer);
    if (e->data)
        gd_data_close(e->data);
    gd_backend_group_close(&e->backends);
    memset(e, 0, sizeof *e);
}

static gd_pool *gd_engine_pool(gd_engine *e) { return gd_trainer_pool(e->trainer); }
static const uint8_t *gd_engine_layout(gd_engine *e) {
    return gd_trainer_layout(e->trainer)->digest;
}

gd_status gd_engine_global_hash(gd_engine *e, const gd_global_state *g, uint8_t out[32]) {
    return gd_global_state_hash(gd_engine_pool(e), out, gd_engine_layout(e),
                                e->rc.diloco.chunk_elems, g);
}

gd_status gd_engine_initial_global(gd_engine *e, gd_global_state *g) {
    GD_TRY(gd_global_state_init(g, e->n));
    gd_params_init(gd_engine_pool(e), g->params, gd_trainer_layout(e->trainer),
                   e->rc.diloco.inner.seed);
    uint8_t hash[32];
    gd_status s = gd_engine_global_hash(e, g, hash);
    if (s == GD_OK && memcmp(hash, e->rc.initial_state_hash, 32) != 0)
        s = gd_fail(GD_ERR_INVALID, "run spec: initial_state_hash is not the hash of the seed's "
                                    "initial weights");
    if (s != GD_OK)
        gd_global_state_free(g);
    return s;
}

gd_status gd_engine_worker_init(gd_engine *e, gd_worker_state *w, const char *address,
                                uint32_t rank) {
    if (strlen(address) > GD_STATE_ADDRESS_MAX)
        return gd_fail(GD_ERR_INVALID, "address %.80s is too long for a worker state", address);
    GD_TRY(gd_worker_state_init(w, rank, e->n));
    snprintf(w->address, sizeof w->address, "%s", address);
    return GD_OK;
}

/* --- training ---------------------------------------------------------------------------- */

void gd_trained_round_free(gd_trained_round *t) {
    gd_worker_round_free(&t->r);
    for (uint32_t i = 0; t->starts && i < t->segments; i++)
        gd_worker_state_free(&t->starts[i]);
    free(t->starts);
    gd_buf_free(&t->transcript);
    memset(t, 0, sizeof *t);
}

void gd_trained_round_shed(gd_trained_round *t) {
    gd_diloco_commit commit = t->commit;
    double mean_loss = t->mean_loss;
    uint32_t segments = t->segments;
    gd_trained_round_free(t);
    t->commit = commit;
    t->mean_loss = mean_loss;
    t->segments = segments;
}

uint64_t gd_engine_loss_micro(double loss) {
    if (!(loss >= 0) || loss > 1e12)
        return 0; /* a non-finite or absurd loss is reported as 0: the chain only displays it */
    return (uint64_t)llround(loss * 1e6);
}

void gd_engine_worker_reset(gd_worker_state *w) {
    memset(w->exp_avg, 0, w->n * sizeof(float));
    memset(w->exp_avg_sq, 0, w->n * sizeof(float));
    memset(w->residual, 0, w->n * sizeof(float));
    w->step = 0;
}

static gd_status gd_transcript_encode(const gd_worker_round *r, gd_buf *out) {
    for (uint32_t i = 0; i < r->n_leaves; i++) {
        uint8_t enc[GD_WORKER_DESC_BYTES];
        gd_worker_desc_encode(&r->descs[i], enc);
        GD_TRY(gd_buf_append(out, enc, sizeof enc));
    }
    return GD_OK;
}

bool gd_engine_overlapped(const gd_engine *e, uint64_t round, bool has_prev) {
    return e->rc.diloco.overlap && has_prev && round > 0;
}

/* What every way of training a round does first: the sizes, a fresh
 * start's reset, the segment starts' array. */
static gd_status gd_engine_round_prepare(gd_engine *e, const gd_global_state *start,
                                         gd_trained_round *out, bool fresh, gd_worker_state *w) {
    memset(out, 0, sizeof *out);
    const gd_diloco_config *c = &e->rc.diloco;
    if (start->n != e->n || w->n != e->n)
        return gd_fail(GD_ERR_INVALID, "state sizes are not the model's %zu values", e->n);
    if (fresh)
        gd_engine_worker_reset(w);
    out->segments = c->inner_steps / c->segment_steps;
    out->starts = calloc(out->segments, sizeof *out->starts);
    if (out->starts == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    return GD_OK;
}

gd_status gd_engine_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                          const gd_global_state *g, bool fresh, gd_worker_state *w) {
    if (g->params == NULL)
        return gd_fail(GD_ERR_INVALID, "a round trained whole needs G's params in memory");
    GD_TRY(gd_engine_round_prepare(e, g, out, fresh, w));
    gd_status s = gd_diloco_worker_round(e->trainer, &e->rc.diloco, e->data, &out->r, round,
                                         g->params, g->n, w, out->starts);
    if (s == GD_OK)
        s = gd_engine_round_seal(e, out, round);
    if (s != GD_OK)
        gd_trained_round_free(out);
    return s;
}

/* S_r from a view of the worker's own payload of round - 1, checked
 * against its commitment: chunk by chunk the validator's rule
 * (gd_diloco_overlap_start), the decoded chunk, then G_{r-1} minus it;
 * no decoded copy of the whole payload, and no momentum. Closes v. */
/* S_r = G_{r-1} - Δ̂ read a window of whole chunks at a time: the
 * worker's own payload of r - 1 decoded a chunk at a time, G_{r-1}'s chunk
 * read from memory or its file (checked against its leaf). */
typedef struct gd_overlap_reader {
    gd_payload_view *v;
    const gd_global_state *g_prev;
    float *prev; /* a chunk of G_{r-1} */
} gd_overlap_reader;

static gd_status gd_overlap_read(const void *ctx, float *out, size_t lo, size_t count) {
    const gd_overlap_reader *x = ctx;
    uint32_t ce = x->v->header.chunk_elems;
    if (lo % ce != 0)
        return gd_fail(GD_ERR_INVALID, "an overlapped start is read a chunk at a time");
    for (size_t at = lo; at < lo + count;) {
        uint32_t chunk = (uint32_t)(at / ce);
        size_t values = gd_payload_view_chunk_values(x->v, chunk);
        if (values == 0 || values > lo + count - at)
            return gd_fail(GD_ERR_INVALID, "an overlapped start is read a chunk at a time");
        float *d = out + (at - lo);
        GD_TRY(gd_payload_view_decode(x->v, chunk, d, values));
        GD_TRY(gd_global_state_read(x->g_prev, x->prev, NULL, at, values));
        for (size_t i = 0; i < values; i++)
            d[i] = x->prev[i] - d[i];
        at += values;
    }
    return GD_OK;
}

/* S_r made from v (closed here) in memory, or in a file in spill_dir. */
static gd_status gd_engine_overlap_from(gd_engine *e, gd_global_state *out, uint64_t round,
                                        const gd_global_state *g_prev, gd_payload_view *v,
                                        const char *spill_dir) {
    memset(out, 0, sizeof *out);
    gd_overlap_reader x = {v, g_prev, malloc((size_t)v->header.chunk_elems * sizeof(float))};
    gd_values_reader from = {gd_overlap_read, &x};
    gd_status s = x.prev ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for S_r");
    if (s == GD_OK && spill_dir != NULL) {
        s = gd_global_state_make_file(out, gd_engine_pool(e), spill_dir, e->n,
                                      v->header.chunk_elems, &from);
    } else if (s == GD_OK) {
        out->n = e->n;
        out->params = gd_calloc_large(e->n, sizeof(float));
        s = out->params ? from.read(from.ctx, out->params, 0, e->n)
                        : gd_fail(GD_ERR_NOMEM, "out of memory for S_r");
    }
    free(x.prev);
    gd_payload_view_close(v);
    if (s != GD_OK) {
        gd_global_state_free(out);
        return gd_fail_context(s, "the overlapped start of round %llu",
                               (unsigned long long)round);
    }
    out->round = round;
    return GD_OK;
}

static gd_status gd_engine_overlap_check(const gd_engine *e, uint64_t round,
                                         const gd_global_state *g_prev) {
    if (round == 0 || g_prev->n != e->n)
        return gd_fail(GD_ERR_INVALID, "an overlapped start needs round 0's successor and G of "
                                       "the model's %zu values",
                       e->n);
    return GD_OK;
}

gd_status gd_engine_overlap_start_path(gd_engine *e, gd_global_state *out, uint64_t round,
                                       const char *address, const gd_global_state *g_prev,
                                       const char *prev_path, const uint8_t prev_root[32],
                                       uint32_t prev_leaves, const char *spill_dir) {
    GD_TRY(gd_engine_overlap_check(e, round, g_prev));
    gd_payload_view v;
    GD_TRY(gd_engine_payload_view_path_proved(e, &v, NULL, NULL, round - 1, address, prev_path,
                                              prev_root, prev_leaves));
    return gd_engine_overlap_from(e, out, round, g_prev, &v, spill_dir);
}

void gd_engine_job_free(gd_engine_job *job) {
    gd_global_state_free(&job->own_start);
    if (job->prev_open)
        close(job->prev_fd);
    gd_trained_round_free(&job->out);
    memset(job, 0, sizeof *job);
}

/* The residual the round begins with: prev's, read through a descriptor
 * of the job's own (the job may outlive the caller's), or zeros. */
static gd_status gd_engine_job_prev(gd_engine_job *job, const gd_state_file_view *prev) {
    job->residual = gd_values_reader_of(NULL);
    if (prev == NULL)
        return GD_OK;
    if (prev->arrays != 4)
        return gd_fail(GD_ERR_INVALID, "the worker's previous state has no residual");
    job->prev = *prev;
    job->has_prev = true;
    if (prev->fd >= 0) {
        job->prev_fd = fcntl(prev->fd, F_DUPFD_CLOEXEC, 0);
        if (job->prev_fd < 0)
            return gd_fail(GD_ERR_IO, "cannot keep the worker's previous state open: %s",
                           strerror(errno));
        job->prev_open = true;
        job->prev.fd = job->prev_fd;
    }
    job->residual = gd_state_file_view_residual(&job->prev);
    return GD_OK;
}

/* Leaf 0 loaded from prev's file must carry what its descriptor says of
 * the moments and residual (the step is the descriptor's by
 * construction); anything else is this host's disk. */
static gd_status gd_engine_job_prev_check(const gd_engine_job *job, const gd_worker_desc *got) {
    const gd_worker_desc *want = &job->prev.desc;
    if (memcmp(got->exp_avg_root, want->exp_avg_root, 32) != 0 ||
        memcmp(got->exp_avg_sq_root, want->exp_avg_sq_root, 32) != 0 ||
        memcmp(job->run.residual_root, want->residual_root, 32) != 0)
        return gd_fail(GD_ERR_IO, "the worker's stored state after round %llu does not match "
                                  "its descriptor",
                       (unsigned long long)want->round);
    return GD_OK;
}

/* The job's segment starts go to its sink, leaf 0 only once it is held to
 * prev's descriptor (so a start from a damaged file is never put in
 * place). */
static gd_status gd_job_start_begin(void *ctx, uint64_t round, uint32_t leaf, size_t n) {
    gd_engine_job *job = ctx;
    job->start_leaf = leaf;
    return job->sink.starts.begin(job->sink.starts.ctx, round, leaf, n);
}

static gd_status gd_job_start_write(void *ctx, const float *params, const float *exp_avg,
                                    const float *exp_avg_sq, const float *residual, size_t lo,
                                    size_t count) {
    gd_engine_job *job = ctx;
    return job->sink.starts.write(job->sink.starts.ctx, params, exp_avg, exp_avg_sq, residual, lo,
                                 count);
}

static gd_status gd_job_start_end_unhashed(void *ctx, const gd_worker_desc *desc) {
    gd_engine_job *job = ctx;
    if (job->start_leaf == 0 && job->has_prev) /* never: leaf 0 is loaded, and hashed so */
        return gd_fail(GD_ERR_INVALID, "leaf 0 is held to the previous state's descriptor");
    return job->sink.starts.end_unhashed(job->sink.starts.ctx, desc);
}

static gd_status gd_job_start_roots(void *ctx, uint64_t round, uint32_t leaf,
                                   uint8_t roots[3][GD_MMR_HASH_LEN]) {
    gd_engine_job *job = ctx;
    return job->sink.starts.roots(job->sink.starts.ctx, round, leaf, roots);
}

static float *gd_job_start_place(void *ctx, int array, size_t lo, size_t count) {
    gd_engine_job *job = ctx;
    return job->sink.starts.place(job->sink.starts.ctx, array, lo, count);
}

static gd_status gd_job_start_end(void *ctx, const gd_worker_desc *desc) {
    gd_engine_job *job = ctx;
    gd_status s = GD_OK;
    if (desc != NULL && job->start_leaf == 0 && job->has_prev)
        s = gd_engine_job_prev_check(job, desc);
    gd_status e = job->sink.starts.end(job->sink.starts.ctx, s == GD_OK ? desc : NULL);
    return s != GD_OK ? s : e;
}

gd_status gd_engine_job_begin(gd_engine *e, uint64_t round, const gd_global_state *borrow,
                              gd_global_state *take, const gd_state_file_view *prev,
                              const char *address, uint32_t rank,
                              const gd_engine_start_sink *sink, gd_engine_job *job) {
    gd_engine_job_free(job);
    const gd_global_state *start = take ? take : borrow;
    if (sink == NULL || sink->starts.begin == NULL || sink->starts.write == NULL ||
        sink->starts.end == NULL || sink->post_begin == NULL ||
        sink->post_write == NULL || sink->post_end == NULL || (borrow == NULL) == (take == NULL))
        return gd_fail(GD_ERR_INVALID, "a round trained a segment at a time needs a sink and "
                                       "one start");
    if (start->n != e->n || (prev != NULL && prev->desc.n != e->n))
        return gd_fail(GD_ERR_INVALID, "state sizes are not the model's %zu values", e->n);
    const gd_diloco_config *c = &e->rc.diloco;
    job->sink = *sink;
    job->out.segments = c->inner_steps / c->segment_steps;
    job->round = round;
    if (take != NULL) {
        job->own_start = *take;
        memset(take, 0, sizeof *take);
        start = &job->own_start;
    }
    /* Read a window at a time, from memory or G's file, as the trainer
     * loads it and again as Δ is made (hashed both times). */
    job->start = gd_global_params_reader(start);
    gd_status s = gd_engine_job_prev(job, prev);
    gd_worker_state_source from;
    if (prev != NULL)
        from = gd_state_file_view_source(&job->prev);
    /* Leaf 0, S_r loaded with the optimizer state, goes to the sink as the
     * trainer loads it; each later start as the boundary is described. */
    gd_state_leaf_sink starts = {.begin = gd_job_start_begin, .write = gd_job_start_write,
                                 .end = gd_job_start_end, .ctx = job};
    if (sink->starts.end_unhashed != NULL && sink->starts.roots != NULL) {
        starts.end_unhashed = gd_job_start_end_unhashed;
        starts.roots = gd_job_start_roots;
    }
    if (sink->starts.place != NULL)
        starts.place = gd_job_start_place;
    starts.keeps_residual = sink->starts.keeps_residual;
    if (s == GD_OK)
        s = gd_diloco_round_begin(e->trainer, c, &job->out.r, round, &job->start, e->n,
                                  prev ? &from : NULL, address, rank, &job->residual, &starts,
                                  &job->run);
    if (s != GD_OK) {
        gd_engine_job_free(job);
        return s;
    }
    job->active = true;
    return GD_OK;
}

gd_status gd_engine_job_segment(gd_engine *e, gd_engine_job *job,
                                const gd_worker_state_source *reload, bool *done) {
    *done = false;
    if (!job->active)
        return gd_fail(GD_ERR_INVALID, "no round is being trained");
    const gd_diloco_config *c = &e->rc.diloco;
    gd_status s = gd_diloco_round_segment(e->trainer, c, e->data, &job->out.r, reload,
                                          &job->run);
    if (s == GD_OK && job->run.done == job->run.segments) {
        /* Leaf S + 1 and the payload go to their files as they are made. */
        const gd_engine_start_sink *k = &job->sink;
        uint32_t post = job->run.segments + 1;
        gd_file_atomic payload = {.fd = -1};
        bool to_file = k->payload_begin != NULL;
        s = k->post_begin(k->ctx, job->round, post, e->n);
        if (s == GD_OK && to_file)
            s = k->payload_begin(k->ctx, job->round, &payload);
        gd_state_sink to = {k->post_write, k->ctx};
        if (s == GD_OK)
            s = gd_diloco_round_finish(e->trainer, c, &job->out.r, &job->run, &to,
                                       to_file ? &payload : NULL);
        if (s == GD_OK && to_file)
            s = gd_file_atomic_commit(&payload);
        if (to_file)
            gd_file_atomic_abort(&payload);
        if (s == GD_OK)
            s = k->post_end(k->ctx, &job->out.r.descs[post]);
        else
            (void)k->post_end(k->ctx, NULL);
        if (s == GD_OK)
            s = gd_engine_round_seal(e, &job->out, job->round);
        *done = s == GD_OK;
    }
    if (s != GD_OK)
        gd_engine_job_free(job);
    return s;
}

uint64_t gd_engine_job_step(const gd_engine *e) {
    return gd_trainer_step_count(e->trainer);
}

void gd_engine_job_take(gd_engine_job *job, gd_trained_round *out) {
    *out = job->out;
    memset(&job->out, 0, sizeof job->out);
    gd_engine_job_free(job);
}

gd_status gd_engine_round_seal(gd_engine *e, gd_trained_round *out, uint64_t round) {
    const gd_diloco_config *c = &e->rc.diloco;
    GD_TRY(gd_transcript_encode(&out->r, &out->transcript));
    gd_diloco_commit *cm = &out->commit;
    cm->run = c->run;
    cm->round = round;
    memcpy(cm->payload_root, out->r.payload_root, 32);
    cm->payload_leaves = out->r.payload_leaves;
    cm->payload_bytes = gd_payload_wire_bytes(&out->r.payload);
    memcpy(cm->transcript_root, out->r.transcript_root, 32);
    cm->segment_count = out->segments;
    cm->loss_first_micro = gd_engine_loss_micro(out->r.first_segment_loss);
    cm->loss_last_micro = gd_engine_loss_micro(out->r.last_segment_loss);
    out->mean_loss = out->r.steps ? out->r.loss_sum / out->r.steps : 0;
    return GD_OK;
}

gd_status gd_engine_state_file(gd_engine *e, gd_buf *out, uint64_t round,
                               const gd_worker_state *state, uint32_t leaf, uint32_t segments) {
    if (leaf >= segments && leaf != segments + 1)
        return gd_fail(GD_ERR_INVALID, "leaf %u is not a served state of %u segments", leaf,
                       segments);
    gd_state_stage stage = leaf == segments + 1 ? GD_STAGE_ENCODED : GD_STAGE_TRAIN;
    return gd_worker_state_serialize(gd_engine_pool(e), &e->tag, out, round, stage, state);
}

gd_status gd_engine_transcript_parse(const uint8_t *bytes, size_t len, uint32_t segments,
                                     const uint8_t root[32], gd_worker_desc *descs,
                                     gd_mmr *mmr) {
    gd_mmr_init(mmr);
    uint32_t leaves = gd_transcript_leaves(segments);
    if (segments == 0 || segments > GD_MMR_MAX_LEAVES / 2 ||
        len != (size_t)leaves * GD_WORKER_DESC_BYTES)
        return gd_fail(GD_ERR_PARSE, "a transcript of %u segments is %u descriptors, not %zu "
                                     "bytes",
                       segments, leaves, len);
    for (uint32_t i = 0; i < leaves; i++) {
        GD_TRY(gd_worker_desc_decode(&descs[i], bytes + (size_t)i * GD_WORKER_DESC_BYTES,
                                     GD_WORKER_DESC_BYTES));
        uint8_t hash[GD_MMR_HASH_LEN], leaf[GD_MMR_HASH_LEN];
        gd_worker_desc_hash(&descs[i], hash);
        gd_mmr_hash_leaf(leaf, i, hash, sizeof hash);
        GD_TRY(gd_mmr_append(mmr, leaf));
    }
    uint8_t got[GD_MMR_HASH_LEN];
    GD_TRY(gd_mmr_root(mmr, got));
    if (memcmp(got, root, 32) != 0)
        return gd_fail(GD_ERR_INVALID, "the transcript's root is not the committed one");
    return GD_OK;
}

/* --- payloads and aggregation ------------------------------------------------------------ */

/* The header this run expects of participant's payload in round. */
static gd_payload_header gd_engine_payload_want(gd_engine *e, uint64_t round,
                                                const char *participant) {
    const gd_diloco_config *c = &e->rc.diloco;
    gd_payload_header want = {.run = c->run, .round = round, .param_count = e->n,
                              .codec = c->codec, .chunk_elems = c->chunk_elems};
    snprintf(want.participant, sizeof want.participant, "%s", participant);
    memcpy(want.layout_digest, gd_engine_layout(e), 32);
    memcpy(want.spec_digest, c->spec_digest, 32);
    return want;
}

static gd_status gd_engine_payload_root_is(const uint8_t got[32], uint32_t got_leaves,
                                           const uint8_t root[32], uint32_t leaves,
                                           const char *participant) {
    if (got_leaves != leaves || memcmp(got, root, 32) != 0)
        return gd_fail(GD_ERR_INVALID, "%s's payload is not the one it committed", participant);
    return GD_OK;
}

/* Every chunk decoded as the payload is checked against its commitment
 * (on the pool's threads, in any order): the lowest chunk that does not
 * decode is recorded, and the pass goes on, since whether the bytes are
 * the committed ones is known only at its end; with chunks of whole
 * GD_SUM_SQUARES_CHUNK blocks each chunk's blocks are summed as well, in
 * pieces that fold in block order (gd_sum_squares). */
typedef struct gd_engine_decodes {
    const gd_codec *codec;
    size_t n;
    uint32_t chunk_elems;
    bool norm;
    gd_sum_squares sums;
    pthread_mutex_t lock;
    gd_payload_decoded *decoded;
} gd_engine_decodes;

static gd_status gd_engine_decodes_chunk(void *ctx, uint32_t chunk, const uint8_t *raw,
                                         size_t raw_len) {
    gd_engine_decodes *x = ctx;
    size_t lo = (size_t)chunk * x->chunk_elems;
    size_t count = x->n - lo < x->chunk_elems ? x->n - lo : x->chunk_elems;
    float *values = malloc(count * sizeof(float));
    gd_status s = values ? gd_codec_decode_chunk(x->codec, raw, raw_len, values, count)
                         : gd_fail(GD_ERR_NOMEM, "out of memory for a payload chunk");
    gd_status summed = s == GD_OK && x->norm ? gd_sum_squares_add(&x->sums, values, lo, count)
                                             : GD_OK;
    free(values);
    if (summed != GD_OK) /* the sum is this node's work, never the payload's fault */
        return summed;
    if (s == GD_OK || s == GD_ERR_NOMEM) /* out of memory: this node's failure */
        return s;
    pthread_mutex_lock(&x->lock);
    if (!x->decoded->malformed || chunk < x->decoded->bad_chunk) {
        x->decoded->malformed = true;
        x->decoded->bad_chunk = chunk;
        snprintf(x->decoded->why, sizeof x->decoded->why, "%s", gd_error_detail());
    }
    pthread_mutex_unlock(&x->lock);
    return GD_OK;
}

/* An opened view held to the header and commitment (its whole MMR kept
 * in mmr when not NULL), every chunk decoded in the same pass when decoded
 * is given; closed on failure. */
static gd_status gd_engine_payload_check(gd_engine *e, gd_payload_view *out, gd_mmr *mmr,
                                         gd_payload_decoded *decoded, uint64_t round,
                                         const char *participant, const uint8_t root[32],
                                         uint32_t leaves) {
    gd_payload_header want = gd_engine_payload_want(e, round, participant);
    uint8_t got[GD_MMR_HASH_LEN];
    uint32_t got_leaves = 0;
    const gd_diloco_config *c = &e->rc.diloco;
    gd_engine_decodes x = {.codec = &c->codec, .n = e->n, .chunk_elems = c->chunk_elems,
                           .norm = c->chunk_elems % GD_SUM_SQUARES_CHUNK == 0,
                           .decoded = decoded};
    gd_payload_visitor visit = {gd_engine_decodes_chunk, &x};
    gd_status s = gd_payload_header_matches(&out->header, &want);
    if (decoded != NULL) {
        memset(decoded, 0, sizeof *decoded);
        pthread_mutex_init(&x.lock, NULL);
        if (s == GD_OK && x.norm)
            s = gd_sum_squares_init(&x.sums, e->n);
    }
    const gd_payload_visitor *v = decoded != NULL ? &visit : NULL;
    if (s == GD_OK && mmr == NULL)
        s = gd_payload_view_root_visit(out, got, &got_leaves, v, gd_engine_pool(e));
    if (s == GD_OK && mmr != NULL) {
        s = gd_payload_view_mmr_visit(out, mmr, v, gd_engine_pool(e));
        got_leaves = s == GD_OK ? mmr->n_leaves : 0;
        if (s == GD_OK)
            s = gd_mmr_root(mmr, got);
        if (s != GD_OK)
            gd_mmr_free(mmr);
    }
    if (s == GD_OK)
        s = gd_engine_payload_root_is(got, got_leaves, root, leaves, participant);
    if (decoded != NULL) {
        pthread_mutex_destroy(&x.lock);
        if (s == GD_OK && x.norm && !decoded->malformed) {
            decoded->has_norm = true;
            decoded->sum_squares = gd_sum_squares_total(&x.sums);
        }
        gd_sum_squares_free(&x.sums);
        if (s != GD_OK)
            memset(decoded, 0, sizeof *decoded); /* not the committed bytes: nothing known */
    }
    if (s != GD_OK && mmr != NULL)
        gd_mmr_free(mmr);
    if (s != GD_OK)
        gd_payload_view_close(out);
    return s;
}

gd_status gd_engine_payload_view_proved(gd_engine *e, gd_payload_view *out, gd_mmr *mmr,
                                        gd_payload_decoded *decoded, uint64_t round,
                                        const char *participant, const uint8_t *bytes,
                                        size_t len, const uint8_t root[32], uint32_t leaves) {
    GD_TRY(gd_payload_view_open(out, bytes, len));
    return gd_engine_payload_check(e, out, mmr, decoded, round, participant, root, leaves);
}

gd_status gd_engine_payload_view_path_proved(gd_engine *e, gd_payload_view *out, gd_mmr *mmr,
                                             gd_payload_decoded *decoded, uint64_t round,
                                             const char *participant, const char *path,
                                             const uint8_t root[32], uint32_t leaves) {
    GD_TRY(gd_payload_view_open_path(out, path));
    return gd_engine_payload_check(e, out, mmr, decoded, round, participant, root, leaves);
}

gd_status gd_engine_payload_view_file(gd_engine *e, gd_payload_view *out,
                                      gd_payload_decoded *decoded, uint64_t round,
                                      const char *participant, int fd, uint64_t len,
                                      const uint8_t root[32], uint32_t leaves) {
    GD_TRY(gd_payload_view_open_file(out, fd, len));
    return gd_engine_payload_check(e, out, NULL, decoded, round, participant, root, leaves);
}

/* A contribution read a range at a time from its payload where it lies:
 * a chunk inside the range is decoded straight into it, one that straddles
 * the range's edge into `cache`, kept for the next range. */
typedef struct gd_engine_reader {
    gd_payload_view view;
    bool open;
    bool learning; /* checked as it arrived: its leaves learned as the step reads it */
    float *cache;
    uint32_t cached; /* the chunk in cache, or UINT32_MAX */
    double sum_squares;
} gd_engine_reader;

static gd_status gd_engine_read_chunks(gd_engine_reader *r, float *out, size_t lo,
                                       size_t count) {
    size_t ce = r->view.header.chunk_elems;
    for (size_t chunk = lo / ce; count > 0 && chunk * ce < lo + count; chunk++) {
        size_t first = chunk * ce;
        size_t values = gd_payload_view_chunk_values(&r->view, (uint32_t)chunk);
        if (values == 0)
            return gd_fail(GD_ERR_INVALID, "the payload ends before value %zu", lo + count);
        size_t from = first < lo ? lo : first;
        size_t to = first + values < lo + count ? first + values : lo + count;
        if (from == first && to == first + values) {
            GD_TRY(gd_payload_view_decode(&r->view, (uint32_t)chunk, out + (first - lo),
                                          values));
            continue;
        }
        if (r->cache == NULL && (r->cache = malloc(ce * sizeof(float))) == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for a payload chunk");
        if (r->cached != chunk) {
            r->cached = UINT32_MAX;
            GD_TRY(gd_payload_view_decode(&r->view, (uint32_t)chunk, r->cache, values));
            r->cached = (uint32_t)chunk;
        }
        memcpy(out + (from - lo), r->cache + (from - first), (to - from) * sizeof(float));
    }
    return GD_OK;
}

static gd_status gd_engine_read_range(void *ctx, float *out, size_t lo, size_t count) {
    gd_engine_reader *r = ctx;
    gd_status s = gd_engine_read_chunks(r, out, lo, count);
    /* A payload checked as it arrived that no longer reads or decodes was
     * changed on this host's disk since: never its worker's fault. */
    if (s != GD_OK && s != GD_ERR_NOMEM && s != GD_ERR_IO && r->learning)
        s = gd_fail_context(GD_ERR_IO, "a payload changed on disk after it was checked");
    return s;
}

/* Values per window: a multiple of the sum-of-squares chunk and, where
 * the payload's chunks allow, of them (each chunk decoded straight into its
 * window), at least 2^20 (4 MiB a window). */
static size_t gd_engine_window(uint32_t chunk_elems) {
    size_t window = chunk_elems % GD_SUM_SQUARES_CHUNK == 0 ? chunk_elems
                                                            : GD_SUM_SQUARES_CHUNK;
    while (window < ((size_t)1 << 20))
        window *= 2;
    return window;
}

gd_status gd_engine_aggregate_io(gd_engine *e, uint64_t round, const gd_engine_contribution *cs,
                                 size_t n, const gd_global_io *g) {
    gd_contribution_windowed *contribs = calloc(n ? n : 1, sizeof *contribs);
    gd_engine_reader *readers = calloc(n ? n : 1, sizeof *readers);
    gd_status s = contribs && readers ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    /* Every payload against its commitment before anything is stepped.
     * One whose norm the caller has (it checked the payload as it arrived,
     * gd_payload_decoded) is read once, by the step, which learns its leaves
     * as it goes and holds them to the commitment at the end, before G' can
     * be committed. Any other is checked now, its norm coming out of the
     * same pass when its chunks hold whole sum-of-squares blocks (else the
     * aggregate's first pass makes it). */
    const gd_diloco_config *c = &e->rc.diloco;
    bool norms = c->chunk_elems % GD_SUM_SQUARES_CHUNK == 0;
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        gd_engine_reader *r = &readers[i];
        r->cached = UINT32_MAX;
        r->learning = cs[i].sum_squares != NULL;
        if (cs[i].payload != NULL)
            s = gd_payload_view_open(&r->view, cs[i].payload, cs[i].payload_len);
        else
            s = gd_payload_view_open_file(&r->view, cs[i].fd, cs[i].payload_len);
        gd_payload_decoded d = {0};
        if (s == GD_OK && r->learning) {
            gd_payload_header want = gd_engine_payload_want(e, round, cs[i].address);
            s = gd_payload_header_matches(&r->view.header, &want);
            if (s == GD_OK)
                s = gd_payload_view_learn(&r->view);
            d = (gd_payload_decoded){.has_norm = true, .sum_squares = *cs[i].sum_squares};
            if (s != GD_OK)
                gd_payload_view_close(&r->view);
        } else if (s == GD_OK) {
            s = gd_engine_payload_check(e, &r->view, NULL, norms ? &d : NULL, round,
                                        cs[i].address, cs[i].root, cs[i].leaves);
            if (s == GD_OK && d.malformed) {
                s = gd_fail(GD_ERR_PARSE, "the payload %s committed does not decode: chunk %u: %s",
                            cs[i].address, (unsigned)d.bad_chunk, d.why);
                gd_payload_view_close(&r->view);
            }
        }
        r->open = s == GD_OK;
        r->sum_squares = d.sum_squares;
        contribs[i] = (gd_contribution_windowed){.address = cs[i].address, .n = e->n,
                                                 .layout_digest = gd_engine_layout(e),
                                                 .read_range = gd_engine_read_range,
                                                 .read_ctx = r, .tokens = cs[i].tokens,
                                                 .sum_squares = d.has_norm ? &r->sum_squares
                                                                           : NULL};
    }
    gd_aggregate_stats stats;
    if (s == GD_OK)
        s = gd_diloco_aggregate_windows(gd_trainer_backend(e->trainer), c,
                                        gd_engine_layout(e), contribs, n, g,
                                        gd_engine_window(e->rc.diloco.chunk_elems), &stats);
    /* What the step read of a payload checked when it arrived must be what
     * was checked: its commitment again, from the leaves the step learned. */
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        if (!readers[i].learning)
            continue;
        uint8_t got[GD_MMR_HASH_LEN];
        uint32_t got_leaves = 0;
        s = gd_payload_view_learned_root(&readers[i].view, got, &got_leaves);
        if (s == GD_OK && (got_leaves != cs[i].leaves || memcmp(got, cs[i].root, 32) != 0))
            s = gd_fail(GD_ERR_IO, "the payload of %s kept this round changed on disk after "
                                   "it was checked", cs[i].address);
    }
    for (size_t i = 0; readers != NULL && i < n; i++) {
        if (readers[i].open)
            gd_payload_view_close(&readers[i].view);
        free(readers[i].cache);
    }
    free(readers);
    free(contribs);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "aggregating round %llu",
                                                (unsigned long long)round);
}

gd_status gd_engine_aggregate(gd_engine *e, uint64_t round, const gd_engine_contribution *cs,
                              size_t n, gd_global_state *g) {
    gd_global_arrays arrays = {.from = g, .to = g};
    gd_global_io io = gd_global_io_arrays(&arrays);
    GD_TRY(gd_engine_aggregate_io(e, round, cs, n, &io));
    g->round++;
    return GD_OK;
}

gd_status gd_engine_eval(gd_engine *e, const gd_global_state *g, size_t batches, double *loss) {
    const gd_train_options *o = &e->rc.diloco.inner;
    uint64_t tokens = 0;
    if (g->params != NULL)
        return gd_evaluate(gd_trainer_layout(e->trainer), g->params, e->data, batches, o->batch,
                           o->seq_len, o->micro_batch, gd_engine_pool(e), loss, &tokens);
    /* G's params in its file: loaded into the trainer a window at a time
     * and evaluated there, with no copy of G in host memory. A job that
     * other duties interrupt reloads its state anyway. */
    size_t window = gd_values_window_of(e->rc.diloco.chunk_elems, g->n);
    float *params = malloc(window * sizeof(float));
    gd_status s = params ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for a window of G");
    for (size_t lo = 0; s == GD_OK && lo < g->n; lo += window) {
        size_t count = g->n - lo < window ? g->n - lo : window;
        s = gd_global_state_read(g, params, NULL, lo, count);
        if (s == GD_OK)
            gd_trainer_set_range(e->trainer, params, NULL, NULL, lo, count);
    }
    free(params);
    if (s == GD_OK)
        s = gd_trainer_evaluate(e->trainer, e->data, batches, o->batch, o->seq_len,
                                o->micro_batch, loss, &tokens, NULL, NULL);
    return s;
}
