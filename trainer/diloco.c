/* The DiLoCo round engine (see trainer/diloco.h and docs/protocol.md). */
#include "trainer/diloco.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/mem.h"
#include "kernels/backend.h"
#include "proofs/diloco_rules.h"
#include "trainer/diloco_impl.h"
#include "trainer/owned_read.h"

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

/* --- a worker's round ------------------------------------------------------------------- */

void gd_diloco_state_tag(const gd_diloco_config *c, const gd_param_layout *layout,
                         gd_state_tag *out) {
    memset(out, 0, sizeof *out);
    out->run = c->run;
    memcpy(out->spec_digest, c->spec_digest, 32);
    memcpy(out->layout_digest, layout->digest, 32);
    out->chunk_elems = c->chunk_elems;
}

void gd_worker_round_free(gd_worker_round *r) {
    free(r->descs);
    gd_mmr_free(&r->transcript);
    free(r->leaves);
    free(r->traces);
    gd_payload_free(&r->payload);
    memset(r, 0, sizeof *r);
}

/* A descriptor's fields beside its three trainer roots. */
static void gd_round_desc_fill(const gd_trainer *t, const gd_state_tag *tag, gd_worker_desc *out,
                               uint64_t round, const char *address, uint32_t rank,
                               gd_state_stage stage,
                               const uint8_t residual_root[GD_MMR_HASH_LEN]) {
    out->tag = *tag;
    out->round = round;
    snprintf(out->address, sizeof out->address, "%s", address);
    out->rank = rank;
    out->stage = stage;
    out->step = gd_trainer_step_count(t);
    out->n = gd_trainer_layout(t)->total;
    memcpy(out->residual_root, residual_root, GD_MMR_HASH_LEN);
}

/* Where a leaf's windows go beside their hashes: a sink, with the
 * residual read alongside (its root is the run's, hashed once), or not
 * read when residual is NULL (the sink keeps the round's); place, when
 * set, says where the ranks put the state's windows (its ctx: to's). */
typedef struct gd_leaf_copy {
    const gd_state_sink *to;
    const gd_values_reader *residual;
    float *(*place)(void *ctx, int array, size_t lo, size_t count);
} gd_leaf_copy;

/* A window the ranks read, with the residual's window, to the leaf's
 * sink. */
typedef struct gd_owned_copy {
    const gd_leaf_copy *copy;
    float *residual; /* a window of it */
} gd_owned_copy;

static gd_status gd_owned_copy_write(void *ctx, const float *params, const float *exp_avg,
                                     const float *exp_avg_sq, size_t lo, size_t count) {
    const gd_owned_copy *x = ctx;
    const gd_leaf_copy *c = x->copy;
    if (c->residual != NULL)
        GD_TRY(c->residual->read(c->residual->ctx, x->residual, lo, count));
    return c->to->write(c->to->ctx, params, exp_avg, exp_avg_sq,
                        c->residual != NULL ? x->residual : NULL, lo, count);
}

static float *gd_owned_copy_place(void *ctx, int array, size_t lo, size_t count) {
    const gd_owned_copy *x = ctx;
    return x->copy->place(x->copy->to->ctx, array, lo, count);
}

/* The trainer's three roots read by the ranks that own each shard, every
 * window handed to copy (or NULL) with the residual's. */
static gd_status gd_diloco_owned_roots(gd_trainer *t, const gd_state_tag *tag,
                                       uint8_t roots[3][GD_MMR_HASH_LEN],
                                       const gd_leaf_copy *copy) {
    size_t n = gd_trainer_layout(t)->total;
    gd_owned_copy x = {.copy = copy};
    gd_owned_sink to = {.write = gd_owned_copy_write,
                        .place = copy && copy->place ? gd_owned_copy_place : NULL, .ctx = &x};
    if (copy != NULL && copy->residual != NULL) {
        x.residual = malloc(gd_values_window_of(tag->chunk_elems, n) * sizeof(float));
        if (x.residual == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for a residual window");
    }
    gd_status s = gd_trainer_read_owned(t, roots, tag->chunk_elems, copy ? &to : NULL);
    free(x.residual);
    return s;
}

/* The trainer's state a window at a time, each window loaded from `from`
 * first when it is not NULL, hashed into the three sub-roots of a
 * training-stage descriptor (address, rank, the residual's root given),
 * and handed with the residual's window to copy->to when copy is given:
 * the trainer is read once for both. */
static gd_status gd_diloco_state_windows(gd_trainer *t, const gd_state_tag *tag,
                                         gd_worker_desc *out, uint64_t round, const char *address,
                                         uint32_t rank, const uint8_t residual_root[GD_MMR_HASH_LEN],
                                         const gd_worker_state_source *from,
                                         const gd_leaf_copy *copy) {
    memset(out, 0, sizeof *out);
    size_t n = gd_trainer_layout(t)->total;
    if (address == NULL || address[0] == '\0' || strlen(address) > GD_STATE_ADDRESS_MAX)
        return gd_fail(GD_ERR_INVALID, "worker address must be 1..%d bytes",
                       GD_STATE_ADDRESS_MAX);
    if (from == NULL && gd_trainer_read_owned_fits(n, tag->chunk_elems)) {
        uint8_t roots[3][GD_MMR_HASH_LEN];
        GD_TRY(gd_diloco_owned_roots(t, tag, roots, copy));
        memcpy(out->params_root, roots[0], GD_MMR_HASH_LEN);
        memcpy(out->exp_avg_root, roots[1], GD_MMR_HASH_LEN);
        memcpy(out->exp_avg_sq_root, roots[2], GD_MMR_HASH_LEN);
        gd_round_desc_fill(t, tag, out, round, address, rank, GD_STAGE_TRAIN, residual_root);
        return GD_OK;
    }
    size_t window = gd_values_window_of(tag->chunk_elems, n);
    gd_pool *pool = gd_trainer_pool(t);
    gd_values_stream streams[3];
    float *buf = malloc((copy ? 4 : 3) * window * sizeof(float));
    gd_status s = buf ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for a state window");
    int begun = 0;
    for (; s == GD_OK && begun < 3; begun++)
        s = gd_values_stream_begin(&streams[begun], pool, n, tag->chunk_elems);
    for (size_t lo = 0; s == GD_OK && lo < n; lo += window) {
        size_t count = n - lo < window ? n - lo : window;
        float *p = buf, *m = buf + window, *v = buf + 2 * window, *r = buf + 3 * window;
        if (from != NULL) {
            s = from->read(from->ctx, p, m, v, lo, count);
            if (s == GD_OK)
                gd_trainer_set_range(t, p, m, v, lo, count);
        } else {
            gd_trainer_get_range(t, p, m, v, lo, count);
        }
        for (int a = 0; s == GD_OK && a < 3; a++)
            s = gd_values_stream_add(&streams[a], buf + (size_t)a * window, count);
        if (s == GD_OK && copy != NULL && copy->residual != NULL)
            s = copy->residual->read(copy->residual->ctx, r, lo, count);
        if (s == GD_OK && copy != NULL)
            s = copy->to->write(copy->to->ctx, p, m, v, copy->residual ? r : NULL, lo, count);
    }
    uint8_t *roots[3] = {out->params_root, out->exp_avg_root, out->exp_avg_sq_root};
    for (int a = 0; s == GD_OK && a < 3; a++)
        s = gd_values_stream_root(&streams[a], roots[a]);
    for (int a = 0; a < begun; a++)
        gd_values_stream_end(&streams[a]);
    free(buf);
    if (s != GD_OK)
        return s;
    gd_round_desc_fill(t, tag, out, round, address, rank, GD_STAGE_TRAIN, residual_root);
    return GD_OK;
}

gd_status gd_diloco_describe_trainer(gd_trainer *t, const gd_state_tag *tag, gd_worker_desc *out,
                                     uint64_t round, const char *address, uint32_t rank,
                                     const uint8_t residual_root[GD_MMR_HASH_LEN]) {
    return gd_diloco_state_windows(t, tag, out, round, address, rank, residual_root, NULL, NULL);
}

/* gd_diloco_load_source, each window also handed to copy (or NULL). */
static gd_status gd_diloco_load_copy(gd_trainer *t, const gd_diloco_config *c,
                                     gd_worker_desc *out, uint64_t round,
                                     const gd_worker_state_source *from,
                                     const uint8_t residual_root[GD_MMR_HASH_LEN],
                                     const gd_leaf_copy *copy) {
    size_t n = gd_trainer_layout(t)->total;
    if (from->read == NULL || from->n != n)
        return gd_fail(GD_ERR_INVALID, "a state of %zu values for a model of %zu", from->n, n);
    gd_train_options o = c->inner;
    o.worker = from->rank;
    GD_TRY(gd_trainer_reconfigure(t, &o));
    gd_trainer_set_step(t, from->step);
    gd_state_tag tag;
    gd_diloco_state_tag(c, gd_trainer_layout(t), &tag);
    return gd_diloco_state_windows(t, &tag, out, round, from->address, from->rank, residual_root,
                                   from, copy);
}

gd_status gd_diloco_load_source(gd_trainer *t, const gd_diloco_config *c, gd_worker_desc *out,
                                uint64_t round, const gd_worker_state_source *from,
                                const uint8_t residual_root[GD_MMR_HASH_LEN]) {
    return gd_diloco_load_copy(t, c, out, round, from, residual_root, NULL);
}

/* GD_ERR_INVALID unless n is the trainer's layout size (what names it). */
static gd_status gd_check_sizes(const gd_trainer *t, size_t n, const char *what) {
    size_t want = gd_trainer_layout(t)->total;
    if (n != want)
        return gd_fail(GD_ERR_INVALID, "%s has %zu values; the model has %zu", what, n, want);
    return GD_OK;
}

/* The worker's rule before coding, one home for the full encode and the
 * one-chunk check: delta = start - params, and with error feedback the
 * residual multiplied by the decay (when it is not 1), as the backend's
 * pseudo-gradient op (NULL: the CPU on the caller's thread). The arrays
 * are the host's: the payload codec needs their bytes. */
static gd_status gd_delta_and_decay(const gd_backend *be, const gd_diloco_config *c,
                                    const float *start, const float *params, float *residual,
                                    size_t count, float *delta) {
    gd_backend cpu;
    if (be == NULL) {
        gd_backend_cpu_init(&cpu, NULL);
        be = &cpu;
    }
    float *r = c->error_feedback ? residual : NULL;
    float *d_start = gd_backend_stage(be, start, count);
    float *d_params = gd_backend_stage(be, params, count);
    float *d_delta = be->iface->host_memory ? delta : gd_backend_alloc_f32(be, count);
    float *d_residual = r ? gd_backend_stage(be, r, count) : NULL;
    gd_status s = d_start && d_params && d_delta && (d_residual || !r)
                      ? GD_OK
                      : gd_fail(GD_ERR_NOMEM, "out of %s memory for the pseudo-gradient",
                                be->iface->name);
    if (s == GD_OK)
        gd_backend_pseudo_gradient(be, d_delta, d_start, d_params, d_residual, count,
                                   (float)c->error_feedback_decay);
    gd_backend_unstage(be, d_start, (float *)start, count, false);
    gd_backend_unstage(be, d_params, (float *)params, count, false);
    gd_backend_unstage(be, d_delta, delta, count, s == GD_OK);
    gd_backend_unstage(be, d_residual, r, count, s == GD_OK);
    return s;
}

gd_status gd_diloco_encode_chunk(const gd_diloco_config *c, uint8_t *out,
                                 size_t cap, const float *start, const float *params,
                                 float *residual, size_t count, size_t *written) {
    if (count < 1 || count > c->chunk_elems)
        return gd_fail(GD_ERR_INVALID, "a chunk of %zu values (chunks hold 1..%u)", count,
                       c->chunk_elems);
    float *delta = malloc(count * sizeof(float));
    if (delta == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = gd_delta_and_decay(NULL, c, start, params, residual, count, delta);
    if (s == GD_OK)
        s = gd_payload_encode_values(&c->codec, out, cap,
                                     delta, c->error_feedback ? residual : NULL, count, written);
    free(delta);
    return s;
}

/* Δ = start - θ, encoded with (or without) error feedback: per chunk the
 * rule of gd_diloco_encode_chunk, in one pass over windows of whole chunks:
 * the trainer's state, the start and the residual the round began with
 * are read, Δ is made and encoded, and leaf S + 1 (the trainer's state
 * with the residual encoding left) goes to post and into its descriptor's
 * roots, so neither Δ nor the state nor the residual is ever whole in
 * memory. The start and the old residual are hashed as they are read: a
 * Δ from any other start than leaf 0's, or error feedback from any other
 * residual than the training leaves', would commit a payload no check can
 * reproduce. */
enum { GD_ENC_START, GD_ENC_OLD, GD_ENC_PARAMS, GD_ENC_M, GD_ENC_V, GD_ENC_NEW, GD_ENC_STREAMS };

static gd_status gd_encode_round(gd_trainer *t, const gd_diloco_config *c,
                                 const gd_worker_round_run *run, const gd_state_sink *post,
                                 gd_file_atomic *payload_file, gd_worker_round *out) {
    size_t n = gd_trainer_layout(t)->total;
    gd_payload_header h = {.run = c->run, .round = run->round, .param_count = n,
                           .codec = c->codec, .chunk_elems = c->chunk_elems};
    snprintf(h.participant, sizeof h.participant, "%s", run->address);
    memcpy(h.layout_digest, run->tag.layout_digest, 32);
    memcpy(h.spec_digest, run->tag.spec_digest, 32);
    size_t w = gd_values_window_whole(c->chunk_elems, n);
    float *buf = malloc(6 * w * sizeof(float));
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a window of the pseudo-gradient");
    float *params = buf, *m = buf + w, *v = buf + 2 * w, *r = buf + 3 * w, *delta = buf + 4 * w,
          *start = buf + 5 * w;
    gd_payload_encoder e;
    gd_status s = gd_payload_encoder_begin(&e, &out->payload, &h);
    if (s == GD_OK && payload_file != NULL) {
        s = gd_payload_encoder_to_file(&e, payload_file);
        if (s != GD_OK) {
            gd_payload_encoder_abort(&e);
            gd_payload_free(&out->payload);
        }
    }
    if (s != GD_OK) {
        free(buf);
        return s;
    }
    gd_values_stream streams[GD_ENC_STREAMS];
    int begun = 0;
    for (; s == GD_OK && begun < GD_ENC_STREAMS; begun++)
        s = gd_values_stream_begin(&streams[begun], gd_trainer_pool(t), n, c->chunk_elems);
    for (size_t lo = 0; s == GD_OK && lo < n; lo += w) {
        size_t count = n - lo < w ? n - lo : w;
        gd_trainer_get_range(t, params, m, v, lo, count);
        s = run->residual.read(run->residual.ctx, r, lo, count);
        if (s == GD_OK)
            s = run->start.read(run->start.ctx, start, lo, count);
        if (s == GD_OK)
            s = gd_values_stream_add(&streams[GD_ENC_START], start, count);
        if (s == GD_OK)
            s = gd_values_stream_add(&streams[GD_ENC_OLD], r, count);
        if (s == GD_OK)
            s = gd_delta_and_decay(gd_trainer_backend(t), c, start, params, r, count, delta);
        if (s == GD_OK)
            s = gd_payload_encoder_add(&e, delta, c->error_feedback ? r : NULL, lo, count,
                                       gd_trainer_pool(t));
        const float *post_arrays[4] = {params, m, v, r};
        for (int a = 0; s == GD_OK && a < 4; a++)
            s = gd_values_stream_add(&streams[GD_ENC_PARAMS + a], post_arrays[a], count);
        if (s == GD_OK)
            s = post->write(post->ctx, params, m, v, r, lo, count);
    }
    free(buf);
    uint8_t roots[GD_ENC_STREAMS][GD_MMR_HASH_LEN];
    for (int a = 0; s == GD_OK && a < GD_ENC_STREAMS; a++)
        s = gd_values_stream_root(&streams[a], roots[a]);
    for (int a = 0; a < begun; a++)
        gd_values_stream_end(&streams[a]);
    if (s == GD_OK && memcmp(roots[GD_ENC_START], out->descs[0].params_root, 32) != 0)
        s = gd_fail(GD_ERR_INVALID, "the round's start changed while the round trained");
    if (s == GD_OK && memcmp(roots[GD_ENC_OLD], run->residual_root, 32) != 0)
        s = gd_fail(GD_ERR_IO, "the worker's residual read back is not the one its round "
                               "began with");
    if (s == GD_OK)
        s = gd_payload_encoder_end(&e);
    else
        gd_payload_encoder_abort(&e);
    if (s != GD_OK) {
        gd_payload_free(&out->payload);
        return s;
    }
    gd_worker_desc *d = &out->descs[run->segments + 1];
    gd_round_desc_fill(t, &run->tag, d, run->round, run->address, run->rank, GD_STAGE_ENCODED,
                       roots[GD_ENC_NEW]);
    memcpy(d->params_root, roots[GD_ENC_PARAMS], 32);
    memcpy(d->exp_avg_root, roots[GD_ENC_M], 32);
    memcpy(d->exp_avg_sq_root, roots[GD_ENC_V], 32);
    return GD_OK;
}

/* The transcript MMR over the leaves' state hashes. */
static gd_status gd_build_transcript(gd_worker_round *out) {
    for (uint32_t i = 0; i < out->n_leaves; i++) {
        uint8_t leaf[GD_MMR_HASH_LEN];
        gd_worker_desc_hash(&out->descs[i], out->leaves[i]);
        gd_mmr_hash_leaf(leaf, i, out->leaves[i], GD_MMR_HASH_LEN);
        GD_TRY(gd_mmr_append(&out->transcript, leaf));
    }
    return gd_mmr_root(&out->transcript, out->transcript_root);
}

static gd_status gd_round_failed(const gd_worker_round_run *run, gd_worker_round *out,
                                 gd_status s) {
    gd_worker_round_free(out);
    return gd_fail_context(s, "%s, round %llu", run->address, (unsigned long long)run->round);
}

/* Leaf 0's state as the trainer loads it: the round's start as the
 * parameters, the moments of the worker's previous state (zeros without
 * one). */
typedef struct gd_round_start_read_ctx {
    const gd_values_reader *start;
    const gd_worker_state_source *prev; /* or NULL */
} gd_round_start_read_ctx;

static gd_status gd_round_start_read(const void *ctx, float *params, float *exp_avg,
                                     float *exp_avg_sq, size_t lo, size_t count) {
    const gd_round_start_read_ctx *x = ctx;
    if (params != NULL)
        GD_TRY(x->start->read(x->start->ctx, params, lo, count));
    if (x->prev != NULL)
        return x->prev->read(x->prev->ctx, NULL, exp_avg, exp_avg_sq, lo, count);
    if (exp_avg != NULL)
        memset(exp_avg, 0, count * sizeof(float));
    if (exp_avg_sq != NULL)
        memset(exp_avg_sq, 0, count * sizeof(float));
    return GD_OK;
}

/* --- segment starts kept in memory --- */

static gd_status gd_memory_start_begin(void *ctx, uint64_t round, uint32_t leaf, size_t n) {
    gd_memory_starts *m = ctx;
    (void)round;
    m->leaf = leaf;
    return gd_worker_state_init(&m->starts[leaf], 0, n);
}

static gd_status gd_memory_start_write(void *ctx, const float *params, const float *exp_avg,
                                       const float *exp_avg_sq, const float *residual,
                                       size_t lo, size_t count) {
    gd_memory_starts *m = ctx;
    return gd_worker_state_put_window(&m->starts[m->leaf], params, exp_avg, exp_avg_sq,
                                      residual, lo, count);
}

static gd_status gd_memory_start_end(void *ctx, const gd_worker_desc *desc) {
    gd_memory_starts *m = ctx;
    gd_worker_state *w = &m->starts[m->leaf];
    if (desc == NULL) {
        gd_worker_state_free(w);
        return GD_OK;
    }
    snprintf(w->address, sizeof w->address, "%s", desc->address);
    w->rank = desc->rank;
    w->step = desc->step;
    return GD_OK;
}

gd_state_leaf_sink gd_memory_starts_sink(gd_memory_starts *m) {
    return (gd_state_leaf_sink){.begin = gd_memory_start_begin, .write = gd_memory_start_write,
                                .end = gd_memory_start_end, .ctx = m};
}

/* The roots of the start the sink is hashing, once it has, into its
 * descriptor: before anything reads the round's descriptors. */
static gd_status gd_round_collect(gd_worker_round_run *run, gd_worker_round *out) {
    if (!run->unhashed)
        return GD_OK;
    run->unhashed = false;
    const gd_state_leaf_sink *k = &run->starts;
    gd_worker_desc *d = &out->descs[run->unhashed_leaf];
    uint8_t roots[3][GD_MMR_HASH_LEN];
    GD_TRY(k->roots(k->ctx, run->round, run->unhashed_leaf, roots));
    memcpy(d->params_root, roots[0], GD_MMR_HASH_LEN);
    memcpy(d->exp_avg_root, roots[1], GD_MMR_HASH_LEN);
    memcpy(d->exp_avg_sq_root, roots[2], GD_MMR_HASH_LEN);
    return GD_OK;
}

/* The residual to hand with leaf `leaf`: none for a later start when the
 * sink keeps the one it got with leaf 0. */
static const gd_values_reader *gd_round_residual_for(const gd_worker_round_run *run,
                                                     uint32_t leaf) {
    return run->starts.keeps_residual && leaf > 0 ? NULL : &run->residual;
}

/* A start read by the ranks and handed to a sink that hashes it itself:
 * the descriptor's other fields now, its roots later (gd_round_collect). */
static gd_status gd_round_record_unhashed(gd_trainer *t, gd_worker_round_run *run,
                                          gd_worker_desc *out, uint32_t leaf) {
    const gd_state_leaf_sink *k = &run->starts;
    memset(out, 0, sizeof *out);
    GD_TRY(k->begin(k->ctx, run->round, leaf, gd_trainer_layout(t)->total));
    gd_state_sink to = {k->write, k->ctx};
    gd_leaf_copy copy = {.to = &to, .residual = gd_round_residual_for(run, leaf),
                         .place = k->place};
    gd_status s = gd_diloco_owned_roots(t, &run->tag, NULL, &copy);
    if (s != GD_OK) {
        (void)k->end(k->ctx, NULL);
        return s;
    }
    gd_round_desc_fill(t, &run->tag, out, run->round, run->address, run->rank, GD_STAGE_TRAIN,
                       run->residual_root);
    GD_TRY(k->end_unhashed(k->ctx, out));
    run->unhashed = true;
    run->unhashed_leaf = leaf;
    return GD_OK;
}

/* Records leaf `leaf` of the run into out: described from the trainer
 * (loaded from `from` first when it is not NULL) and, when it is a
 * segment start and the run has a starts sink, handed to it in the same
 * pass of windows (hashed by the sink, when it offers to, for a start the
 * ranks read). */
static gd_status gd_round_record(gd_trainer *t, const gd_diloco_config *c,
                                 gd_worker_round_run *run, gd_worker_round *round_out,
                                 uint32_t leaf, const gd_worker_state_source *from) {
    double t0 = gd_clock_seconds();
    GD_TRY(gd_round_collect(run, round_out));
    gd_worker_desc *out = &round_out->descs[leaf];
    const gd_state_leaf_sink *k = &run->starts;
    bool keep = k->begin != NULL && leaf < run->segments;
    if (keep && from == NULL && k->end_unhashed != NULL &&
        gd_trainer_read_owned_fits(gd_trainer_layout(t)->total, run->tag.chunk_elems)) {
        gd_status s = gd_round_record_unhashed(t, run, out, leaf);
        round_out->record_seconds += gd_clock_seconds() - t0;
        return s;
    }
    gd_state_sink to = {k->write, k->ctx};
    gd_leaf_copy copy = {.to = &to, .residual = gd_round_residual_for(run, leaf)};
    gd_status s = keep ? k->begin(k->ctx, run->round, leaf, gd_trainer_layout(t)->total) : GD_OK;
    if (s != GD_OK)
        return s;
    if (from != NULL)
        s = gd_diloco_load_copy(t, c, out, run->round, from, run->residual_root,
                                keep ? &copy : NULL);
    else
        s = gd_diloco_state_windows(t, &run->tag, out, run->round, run->address, run->rank,
                                    run->residual_root, NULL, keep ? &copy : NULL);
    if (keep) {
        gd_status e = k->end(k->ctx, s == GD_OK ? out : NULL);
        if (s == GD_OK)
            s = e;
    }
    round_out->record_seconds += gd_clock_seconds() - t0;
    return s;
}

/* The root of the values a reader gives, read a window at a time. */
static gd_status gd_reader_root(gd_pool *pool, const gd_values_reader *reader, size_t n,
                                uint32_t chunk_elems, uint8_t root[GD_MMR_HASH_LEN]) {
    size_t window = gd_values_window_of(chunk_elems, n);
    float *buf = malloc(window * sizeof(float));
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a window of values");
    gd_values_stream st;
    gd_status s = gd_values_stream_begin(&st, pool, n, chunk_elems);
    bool begun = s == GD_OK;
    for (size_t lo = 0; s == GD_OK && lo < n; lo += window) {
        size_t count = n - lo < window ? n - lo : window;
        s = reader->read(reader->ctx, buf, lo, count);
        if (s == GD_OK)
            s = gd_values_stream_add(&st, buf, count);
    }
    if (s == GD_OK)
        s = gd_values_stream_root(&st, root);
    if (begun)
        gd_values_stream_end(&st);
    free(buf);
    return s;
}

gd_status gd_diloco_round_begin(gd_trainer *t, const gd_diloco_config *c, gd_worker_round *out,
                                uint64_t round, const gd_values_reader *start, size_t start_n,
                                const gd_worker_state_source *prev, const char *address,
                                uint32_t rank, const gd_values_reader *residual,
                                const gd_state_leaf_sink *starts, gd_worker_round_run *run) {
    memset(out, 0, sizeof *out);
    memset(run, 0, sizeof *run);
    gd_mmr_init(&out->transcript);
    size_t n = gd_trainer_layout(t)->total;
    GD_TRY(gd_check_sizes(t, start_n, "the round's start state"));
    if (prev != NULL && (prev->read == NULL || prev->n != n))
        return gd_fail(GD_ERR_INVALID, "the worker's previous state has %zu values; the model "
                                       "has %zu",
                       prev->n, n);
    if (address == NULL || strlen(address) > GD_STATE_ADDRESS_MAX || residual == NULL ||
        residual->read == NULL || start == NULL || start->read == NULL)
        return gd_fail(GD_ERR_INVALID, "a worker round needs an address of at most %d bytes, "
                                       "its start and the worker's residual",
                       GD_STATE_ADDRESS_MAX);
    if (starts != NULL && (starts->begin == NULL || starts->write == NULL ||
                           starts->end == NULL ||
                           (starts->end_unhashed == NULL) != (starts->roots == NULL)))
        return gd_fail(GD_ERR_INVALID, "a starts sink needs begin, write and end, and roots "
                                       "with end_unhashed");
    *run = (gd_worker_round_run){.round = round, .start = *start, .rank = rank,
                                 .residual = *residual,
                                 .segments = c->inner_steps / c->segment_steps};
    if (starts != NULL)
        run->starts = *starts;
    snprintf(run->address, sizeof run->address, "%s", address);
    gd_diloco_state_tag(c, gd_trainer_layout(t), &run->tag);
    out->n_leaves = gd_transcript_leaves(run->segments);
    out->descs = calloc(out->n_leaves, sizeof *out->descs);
    out->leaves = calloc(out->n_leaves, GD_MMR_HASH_LEN);
    out->traces = calloc(run->segments + 1, GD_MMR_HASH_LEN);
    if (out->descs == NULL || out->leaves == NULL || out->traces == NULL) {
        gd_worker_round_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    /* Training never changes the residual: one root for every training leaf. */
    gd_status s = gd_reader_root(gd_trainer_pool(t), residual, n, c->chunk_elems,
                                 run->residual_root);
    gd_round_start_read_ctx x = {.start = start, .prev = prev};
    gd_worker_state_source from = {.address = run->address, .rank = rank,
                                   .step = prev ? prev->step : 0, .n = n,
                                   .read = gd_round_start_read, .ctx = &x};
    if (s == GD_OK)
        s = gd_round_record(t, c, run, out, 0, &from);
    return s == GD_OK ? GD_OK : gd_round_failed(run, out, s);
}

/* The state reloaded from `from` must be the leaf recorded at the
 * boundary: anything else is the host's own failure (its disk), never a
 * different round. */
static gd_status gd_round_reload(gd_trainer *t, const gd_diloco_config *c,
                                 const gd_worker_round *out, const gd_worker_round_run *run,
                                 const gd_worker_state_source *from) {
    gd_worker_desc got;
    GD_TRY(gd_diloco_load_source(t, c, &got, run->round, from, run->residual_root));
    uint8_t a[GD_MMR_HASH_LEN], b[GD_MMR_HASH_LEN];
    gd_worker_desc_hash(&got, a);
    gd_worker_desc_hash(&out->descs[run->done], b);
    if (memcmp(a, b, sizeof a) != 0)
        return gd_fail(GD_ERR_IO, "the state reloaded for segment %u is not the one recorded "
                                  "at its start",
                       run->done);
    return GD_OK;
}

gd_status gd_diloco_round_segment(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                  gd_worker_round *out, const gd_worker_state_source *reload,
                                  gd_worker_round_run *run) {
    uint32_t seg = run->done;
    if (seg >= run->segments)
        return gd_fail(GD_ERR_INVALID, "round %llu has %u segments, all trained",
                       (unsigned long long)run->round, run->segments);
    gd_status s = gd_round_collect(run, out); /* a reload is held to this start's roots */
    if (s == GD_OK && reload != NULL)
        s = gd_round_reload(t, c, out, run, reload);
    double t0 = gd_clock_seconds(), segment_loss = 0;
    gd_diloco_trace_begin(out->traces[seg]);
    for (uint32_t k = 0; s == GD_OK && k < c->segment_steps; k++) {
        if (c->stop != NULL && *c->stop) {
            s = gd_fail(GD_ERR_CANCELLED, "stopped at inner step %u of %u",
                        seg * c->segment_steps + k, c->inner_steps);
            break;
        }
        gd_step_stats st;
        s = gd_trainer_step(t, data, &st);
        if (s != GD_OK)
            break;
        gd_diloco_trace_step(out->traces[seg], st.loss, st.grad_norm);
        out->loss_sum += st.loss;
        segment_loss += st.loss;
        out->steps++;
        out->tokens += st.tokens;
    }
    out->seconds += gd_clock_seconds() - t0;
    segment_loss /= c->segment_steps;
    if (seg == 0)
        out->first_segment_loss = segment_loss;
    out->last_segment_loss = segment_loss;
    /* The trainer holds the state at the new boundary: leaf seg + 1, and
     * where a reloaded segment resumes. */
    if (s == GD_OK)
        s = gd_round_record(t, c, run, out, seg + 1, NULL);
    if (s != GD_OK)
        return gd_round_failed(run, out, s);
    run->done++;
    if (c->on_segment != NULL)
        c->on_segment(c->on_segment_ctx, run->round, seg, run->segments, segment_loss);
    return GD_OK;
}

gd_status gd_diloco_round_finish(gd_trainer *t, const gd_diloco_config *c, gd_worker_round *out,
                                 gd_worker_round_run *run, const gd_state_sink *post,
                                 gd_file_atomic *payload_file) {
    gd_status s = run->done == run->segments
                      ? gd_round_collect(run, out)
                      : gd_fail(GD_ERR_INVALID, "round %llu: %u of %u segments trained",
                                (unsigned long long)run->round, run->done, run->segments);
    if (s == GD_OK)
        s = gd_encode_round(t, c, run, post, payload_file, out);
    if (s == GD_OK)
        s = gd_payload_root(&out->payload, out->payload_root, &out->payload_leaves);
    if (s == GD_OK)
        s = gd_build_transcript(out);
    return s == GD_OK ? GD_OK : gd_round_failed(run, out, s);
}

/* Leaf S + 1 into a whole worker state, a window at a time. */
static gd_status gd_post_into_state(void *ctx, const float *params, const float *exp_avg,
                                    const float *exp_avg_sq, const float *residual, size_t lo,
                                    size_t count) {
    return gd_worker_state_put_window(ctx, params, exp_avg, exp_avg_sq, residual, lo, count);
}

gd_status gd_diloco_worker_round(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                 gd_worker_round *out, uint64_t round, const float *start,
                                 size_t start_n, gd_worker_state *w,
                                 gd_worker_state *segment_starts) {
    GD_TRY(gd_check_sizes(t, w->n, "the worker's state"));
    gd_worker_state_source prev = gd_worker_state_source_of(w);
    gd_values_reader residual = gd_values_reader_of(w->residual);
    gd_values_reader from = gd_values_reader_of(start);
    gd_worker_round_run run;
    gd_memory_starts kept = {.starts = segment_starts};
    gd_state_leaf_sink starts = gd_memory_starts_sink(&kept);
    GD_TRY(gd_diloco_round_begin(t, c, out, round, &from, start_n, &prev, w->address, w->rank,
                                 &residual, segment_starts ? &starts : NULL, &run));
    while (run.done < run.segments)
        GD_TRY(gd_diloco_round_segment(t, c, data, out, NULL, &run));
    /* Each window of w is read (the residual) before it is written. */
    gd_state_sink post = {gd_post_into_state, w};
    GD_TRY(gd_diloco_round_finish(t, c, out, &run, &post, NULL));
    w->step = gd_trainer_step_count(t);
    return GD_OK;
}

/* --- aggregation -------------------------------------------------------------------------- */

/* What the rules need of a contribution, whichever way its values come:
 * one home for the checks, the order and the weights of both aggregates. */
typedef struct gd_contrib_meta {
    const char *address;
    size_t n;
    const uint8_t *layout_digest;
    uint64_t tokens;
    bool has_values; /* exactly one way to read its values */
    size_t index;    /* in the caller's array */
} gd_contrib_meta;

static int gd_cmp_meta(const void *a, const void *b) {
    const gd_contrib_meta *x = a, *y = b;
    return gd_diloco_address_cmp(x->address, y->address);
}

static int gd_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sizes, layouts and tokens first: nothing is read from a delta that does
 * not have exactly G's shape. Then the one address order of
 * proofs/diloco_rules.h, refusing a duplicate. */
static gd_status gd_contribs_order(gd_contrib_meta *m, size_t count, size_t n,
                                   const uint8_t layout_digest[32], double *total_tokens) {
    if (count == 0)
        return gd_fail(GD_ERR_INVALID, "no contributions to aggregate");
    *total_tokens = 0;
    for (size_t i = 0; i < count; i++) {
        const char *who = m[i].address ? m[i].address : "(no address)";
        if (m[i].address == NULL || !m[i].has_values || m[i].layout_digest == NULL)
            return gd_fail(GD_ERR_INVALID, "contribution of %s lacks its address, values or "
                                           "layout digest",
                           who);
        if (m[i].n != n)
            return gd_fail(GD_ERR_INVALID, "contribution of %s has %zu values; G has %zu", who,
                           m[i].n, n);
        if (memcmp(m[i].layout_digest, layout_digest, 32) != 0)
            return gd_fail(GD_ERR_INVALID, "contribution of %s has another model layout", who);
    }
    for (size_t i = 0; i < count; i++) {
        *total_tokens += (double)m[i].tokens;
        if (m[i].tokens == 0)
            return gd_fail(GD_ERR_INVALID, "contribution of %s has no tokens", m[i].address);
    }
    qsort(m, count, sizeof *m, gd_cmp_meta);
    for (size_t i = 1; i < count; i++)
        if (gd_diloco_address_cmp(m[i - 1].address, m[i].address) == 0)
            return gd_fail(GD_ERR_INVALID, "two contributions from %s", m[i].address);
    return GD_OK;
}

/* The clip against the median norm and the token weights, in order: each
 * weight computed in double and rounded to float once, clip * tokens /
 * total. */
static gd_status gd_contribs_weights(const gd_diloco_config *c, const gd_contrib_meta *m,
                                     const double *norms, size_t count, double total_tokens,
                                     float *weights, gd_aggregate_stats *st) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(norms[i]))
            return gd_fail(GD_ERR_INVALID, "contribution of %s is not finite", m[i].address);
    double *sorted = malloc(count * sizeof *sorted);
    if (sorted == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    memcpy(sorted, norms, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, gd_cmp_double);
    size_t mid = count / 2;
    st->median_norm = count % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    st->max_norm = sorted[count - 1];
    free(sorted);
    double limit = c->clip_factor * st->median_norm;
    for (size_t i = 0; i < count; i++) {
        double clip = 1.0;
        if (c->clip_factor > 0 && norms[i] > limit) {
            clip = limit / norms[i];
            st->clipped++;
        }
        weights[i] = (float)(clip * (double)m[i].tokens / total_tokens);
    }
    return GD_OK;
}

/* Contribution x's decoded Δ in host memory: its own values, or decoded
 * into scratch by its reader. */
static gd_status gd_contribution_values(const gd_contribution *x, const float **out, float *scratch,
                                        size_t n) {
    if (x->delta != NULL) {
        *out = x->delta;
        return GD_OK;
    }
    gd_status s = x->read(x->read_ctx, scratch, n);
    if (s != GD_OK)
        return gd_fail_context(s, "reading the contribution of %s", x->address);
    *out = scratch;
    return GD_OK;
}

/* The three steps of an aggregate on host arrays staged into be's memory
 * (no copy on a host-memory backend): one home for both aggregates, so the
 * windowed one is the whole one's arithmetic on ranges. */
static gd_status gd_staged_sum_squares(const gd_backend *be, const float *values, size_t count,
                                       double *sum) {
    float *staged = gd_backend_stage(be, values, count);
    if (staged == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of %s memory for a contribution", be->iface->name);
    *sum = gd_backend_sum_squares_from(be, staged, count, *sum);
    gd_backend_unstage(be, staged, NULL, count, false);
    return GD_OK;
}

static gd_status gd_staged_weighted_add(const gd_backend *be, float *acc, const float *values,
                                        float weight, size_t count) {
    float *staged = gd_backend_stage(be, values, count);
    if (staged == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of %s memory for a contribution", be->iface->name);
    gd_backend_weighted_add(be, acc, staged, weight, count);
    gd_backend_unstage(be, staged, NULL, count, false);
    return GD_OK;
}

/* params and momentum (host, count values) stepped in place by acc. */
static gd_status gd_staged_nesterov(const gd_backend *be, float *params, float *momentum,
                                    const float *acc, size_t count, float lr, float mu) {
    float *p = gd_backend_stage(be, params, count);
    float *m = p ? gd_backend_stage(be, momentum, count) : NULL;
    gd_status s = m ? GD_OK
                    : gd_fail(GD_ERR_NOMEM, "out of %s memory for the outer step",
                              be->iface->name);
    if (s == GD_OK)
        gd_backend_nesterov_step(be, p, m, acc, count, lr, mu);
    if (p != NULL)
        gd_backend_unstage(be, p, params, count, s == GD_OK);
    if (m != NULL)
        gd_backend_unstage(be, m, momentum, count, s == GD_OK);
    return s;
}

/* The L2 norm of each ordered contribution: the backend's sum of squares
 * (fixed chunks, in double), then the square root. */
static gd_status gd_contribution_norms(const gd_backend *be, const gd_contribution *contribs,
                                       const gd_contrib_meta *m, size_t count, size_t n,
                                       float *scratch, double *norms) {
    for (size_t i = 0; i < count; i++) {
        const float *values = NULL;
        double sum = 0;
        GD_TRY(gd_contribution_values(&contribs[m[i].index], &values, scratch, n));
        GD_TRY(gd_staged_sum_squares(be, values, n, &sum));
        norms[i] = sqrt(sum);
    }
    return GD_OK;
}

/* The outer step of g on be (kernels/cpu/round_ops.h): each contribution
 * added to acc by its weight in order, one at a time, then the Nesterov
 * step. G is a host array, staged into the backend's memory (no copy on a
 * host-memory backend). */
static gd_status gd_outer_step_on(const gd_backend *be, const gd_contribution *contribs,
                                  const gd_contrib_meta *m, const float *weights, size_t count,
                                  float *scratch, gd_global_state *g, float lr, float mu) {
    size_t n = g->n;
    float *acc = gd_backend_alloc_f32(be, n);
    if (acc == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of %s memory for the outer step", be->iface->name);
    gd_backend_zero(be, acc, n * sizeof(float));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < count; i++) {
        const float *values = NULL;
        s = gd_contribution_values(&contribs[m[i].index], &values, scratch, n);
        if (s == GD_OK)
            s = gd_staged_weighted_add(be, acc, values, weights[i], n);
    }
    if (s == GD_OK)
        s = gd_staged_nesterov(be, g->params, g->momentum, acc, n, lr, mu);
    gd_backend_free(be, acc);
    return s;
}

gd_status gd_diloco_aggregate(const gd_backend *be, const gd_diloco_config *c,
                              const uint8_t layout_digest[32], const gd_contribution *contribs,
                              size_t n_contribs, gd_global_state *g,
                              gd_aggregate_stats *stats) {
    gd_aggregate_stats st = {0};
    if (stats)
        *stats = st;
    gd_contrib_meta *m = calloc(n_contribs ? n_contribs : 1, sizeof *m);
    if (m == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    bool any_reader = false;
    for (size_t i = 0; i < n_contribs; i++) {
        const gd_contribution *x = &contribs[i];
        m[i] = (gd_contrib_meta){x->address, x->n, x->layout_digest, x->tokens,
                                 (x->delta == NULL) != (x->read == NULL), i};
        any_reader |= x->read != NULL;
    }
    double total_tokens = 0;
    gd_status s = gd_contribs_order(m, n_contribs, g->n, layout_digest, &total_tokens);
    gd_backend cpu;
    if (be == NULL) {
        gd_backend_cpu_init(&cpu, NULL);
        be = &cpu;
    }
    double *norms = calloc(n_contribs ? n_contribs : 1, sizeof *norms);
    float *weights = calloc(n_contribs ? n_contribs : 1, sizeof *weights);
    /* One contribution decoded at a time: a reader writes here. */
    float *scratch = s == GD_OK && any_reader ? malloc(g->n * sizeof *scratch) : NULL;
    gd_mem_prefer_huge(scratch, scratch ? g->n * sizeof *scratch : 0);
    if (s == GD_OK && (!norms || !weights || (any_reader && !scratch)))
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK)
        s = gd_contribution_norms(be, contribs, m, n_contribs, g->n, scratch, norms);
    if (s == GD_OK)
        s = gd_contribs_weights(c, m, norms, n_contribs, total_tokens, weights, &st);
    if (s == GD_OK)
        s = gd_outer_step_on(be, contribs, m, weights, n_contribs, scratch, g,
                             (float)c->outer_lr, (float)c->outer_momentum);
    if (s == GD_OK)
        g->round++;
    if (stats)
        *stats = st;
    free(scratch);
    free(m);
    free(norms);
    free(weights);
    return s;
}

gd_status gd_global_arrays_read(void *ctx, float *params, float *momentum, size_t lo,
                                size_t count) {
    const gd_global_arrays *a = ctx;
    return gd_global_state_read(a->from, params, momentum, lo, count);
}

static gd_status gd_arrays_write(void *ctx, const float *params, const float *momentum,
                                 size_t lo, size_t count) {
    gd_global_arrays *a = ctx;
    if (a->to->params == NULL || a->to->momentum == NULL)
        return gd_fail(GD_ERR_INVALID, "G' in place needs G's arrays in memory");
    memcpy(a->to->params + lo, params, count * sizeof(float));
    memcpy(a->to->momentum + lo, momentum, count * sizeof(float));
    return GD_OK;
}

gd_global_io gd_global_io_arrays(gd_global_arrays *a) {
    return (gd_global_io){.n = a->from->n, .read = gd_global_arrays_read, .write = gd_arrays_write,
                          .ctx = a};
}

/* Window w of the windowed aggregate: [*lo, *lo + *count). */
static void gd_window_range(size_t n, size_t window, size_t w, size_t *lo, size_t *count) {
    *lo = w * window;
    *count = n - *lo < window ? n - *lo : window;
}

gd_status gd_sum_squares_init(gd_sum_squares *s, size_t n) {
    memset(s, 0, sizeof *s);
    s->n = n;
    s->blocks = (n + GD_SUM_SQUARES_CHUNK - 1) / GD_SUM_SQUARES_CHUNK;
    s->partial = calloc(s->blocks ? s->blocks : 1, sizeof *s->partial);
    return s->partial ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for a sum of squares");
}

gd_status gd_sum_squares_add(gd_sum_squares *s, const float *values, size_t lo, size_t count) {
    size_t end = lo + count;
    if (lo % GD_SUM_SQUARES_CHUNK != 0 || end > s->n ||
        (end % GD_SUM_SQUARES_CHUNK != 0 && end != s->n))
        return gd_fail(GD_ERR_INVALID, "values [%zu, %zu) are not whole blocks of %zu", lo, end,
                       s->n);
    gd_backend cpu; /* on the caller's thread: its pool is the caller's */
    gd_backend_cpu_init(&cpu, NULL);
    for (size_t at = lo; at < end; at += GD_SUM_SQUARES_CHUNK) {
        size_t take = end - at < GD_SUM_SQUARES_CHUNK ? end - at : GD_SUM_SQUARES_CHUNK;
        s->partial[at / GD_SUM_SQUARES_CHUNK] =
            gd_backend_sum_squares(&cpu, values + (at - lo), take);
    }
    return GD_OK;
}

double gd_sum_squares_total(const gd_sum_squares *s) {
    double total = 0;
    for (size_t b = 0; b < s->blocks; b++)
        total += s->partial[b];
    return total;
}

void gd_sum_squares_free(gd_sum_squares *s) {
    free(s->partial);
    memset(s, 0, sizeof *s);
}

static gd_status gd_read_window(const gd_contribution_windowed *x, float *out, size_t lo,
                                size_t count) {
    gd_status s = x->read_range(x->read_ctx, out, lo, count);
    return s == GD_OK ? GD_OK
                      : gd_fail_context(s, "reading the contribution of %s", x->address);
}

gd_status gd_diloco_aggregate_windows(const gd_backend *be, const gd_diloco_config *c,
                                      const uint8_t layout_digest[32],
                                      const gd_contribution_windowed *contribs,
                                      size_t n_contribs, const gd_global_io *g, size_t window,
                                      gd_aggregate_stats *stats) {
    gd_aggregate_stats st = {0};
    if (stats)
        *stats = st;
    size_t n = g->n;
    if (window == 0 || window % GD_SUM_SQUARES_CHUNK != 0 || n == 0)
        return gd_fail(GD_ERR_INVALID, "a window of %zu values (a multiple of %zu) over %zu", window,
                       GD_SUM_SQUARES_CHUNK, n);
    gd_contrib_meta *m = calloc(n_contribs ? n_contribs : 1, sizeof *m);
    if (m == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_contribs; i++) {
        const gd_contribution_windowed *x = &contribs[i];
        m[i] = (gd_contrib_meta){x->address, x->n, x->layout_digest, x->tokens,
                                 x->read_range != NULL, i};
    }
    double total_tokens = 0;
    gd_status s = gd_contribs_order(m, n_contribs, n, layout_digest, &total_tokens);
    gd_backend cpu;
    if (be == NULL) {
        gd_backend_cpu_init(&cpu, NULL);
        be = &cpu;
    }
    size_t span = window < n ? window : n, windows = (n + window - 1) / window;
    double *sums = calloc(n_contribs ? n_contribs : 1, sizeof *sums);
    float *weights = calloc(n_contribs ? n_contribs : 1, sizeof *weights);
    float *host = malloc(3 * span * sizeof *host); /* a contribution, params, momentum */
    float *acc = gd_backend_alloc_f32(be, span);
    if (s == GD_OK && (!sums || !weights || !host || !acc))
        s = gd_fail(GD_ERR_NOMEM, "out of memory for the windowed aggregate");
    float *values = host, *params = host + span, *momentum = host + 2 * span;
    /* The norms: each contribution's sum of squares chained over windows
     * that start at multiples of GD_SUM_SQUARES_CHUNK (gd_backend_sum_squares_from),
     * unless the caller made it as it checked the payload (gd_sum_squares). */
    bool first_pass = false;
    for (size_t i = 0; s == GD_OK && i < n_contribs; i++) {
        const double *known = contribs[m[i].index].sum_squares;
        first_pass |= known == NULL;
        if (known != NULL)
            sums[i] = *known;
    }
    for (size_t w = 0; s == GD_OK && first_pass && w < windows; w++) {
        size_t lo, count;
        gd_window_range(n, window, w, &lo, &count);
        for (size_t i = 0; s == GD_OK && i < n_contribs; i++) {
            if (contribs[m[i].index].sum_squares != NULL)
                continue;
            s = gd_read_window(&contribs[m[i].index], values, lo, count);
            if (s == GD_OK)
                s = gd_staged_sum_squares(be, values, count, &sums[i]);
        }
    }
    for (size_t i = 0; s == GD_OK && i < n_contribs; i++)
        sums[i] = sqrt(sums[i]);
    if (s == GD_OK)
        s = gd_contribs_weights(c, m, sums, n_contribs, total_tokens, weights, &st);
    /* The step, window by window: element by element, so the bits are the
     * whole array's. */
    for (size_t w = 0; s == GD_OK && w < windows; w++) {
        size_t lo, count;
        gd_window_range(n, window, w, &lo, &count);
        gd_backend_zero(be, acc, count * sizeof(float));
        for (size_t i = 0; s == GD_OK && i < n_contribs; i++) {
            s = gd_read_window(&contribs[m[i].index], values, lo, count);
            if (s == GD_OK)
                s = gd_staged_weighted_add(be, acc, values, weights[i], count);
        }
        if (s == GD_OK)
            s = g->read(g->ctx, params, momentum, lo, count);
        if (s == GD_OK)
            s = gd_staged_nesterov(be, params, momentum, acc, count, (float)c->outer_lr,
                                   (float)c->outer_momentum);
        if (s == GD_OK)
            s = g->write(g->ctx, params, momentum, lo, count);
    }
    if (stats)
        *stats = st;
    if (acc != NULL)
        gd_backend_free(be, acc);
    free(host);
    free(sums);
    free(weights);
    free(m);
    return s;
}

