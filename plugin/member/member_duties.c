/* Each duty the round driver returns, done by a node (plugin/member/member.h):
 * the compute through the round engine, the artifacts through the store
 * and the peers, and the message for the chain. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/secure.h"
#include "plugin/member/avail_proof.h"
#include "plugin/member/member_internal.h"

const Gonka__Diloco__V1__Commitment *
gd_commitment_in(const Gonka__Diloco__V1__QueryRoundResponse *q, const char *address) {
    for (size_t i = 0; q && i < q->n_commitments; i++)
        if (strcmp(q->commitments[i]->participant, address) == 0)
            return q->commitments[i];
    return NULL;
}

static const Gonka__Diloco__V1__WeightedMember *
gd_weighted_in(const Gonka__Diloco__V1__Round *r, const char *address) {
    for (size_t i = 0; r && i < r->n_members; i++)
        if (strcmp(r->members[i]->address, address) == 0)
            return r->members[i];
    return NULL;
}

/* The round's start state hash as the chain records it. */
static gd_status gd_start_hash(const gd_member *n, uint8_t out[32]) {
    const Gonka__Diloco__V1__Round *r = gd_member_round(n);
    if (r == NULL || r->start_state_hash.len != 32)
        return gd_fail(GD_ERR_NOT_FOUND, "the round has no start state hash");
    memcpy(out, r->start_state_hash.data, 32);
    return GD_OK;
}

/* Whether a check whose target does not answer may wait for a later block
 * of its window [start, end) rather than be answered UNAVAILABLE now.
 * Waiting until the last height that can still land (h + 2 = end) left one
 * height to answer at, and a node misses it: a step with re-executions or
 * a transaction's wait for its block skips heights, and the view can be a
 * block old when the answer is sent, so it lands after the window. Either
 * way the check went unanswered and the validator paid the skip slash. So
 * the answer is given once fewer than a third of the window (at least four
 * blocks) remain after the view's height: a validator answering many
 * checks of one window one after another, each waiting out a withholder,
 * still lands them all, and one sent at the first such height lands in time
 * even a few blocks late. Never at the window's first height while a later
 * one can still land: a target serves its states only once its own view
 * reaches the window, which may be a block after the checker's. */
static bool gd_can_wait(const gd_member *n, int64_t start, int64_t end) {
    int64_t h = n->view.view.height;
    int64_t margin = (end - start) / 3 > 4 ? (end - start) / 3 : 4;
    return h + 2 < end && (h + margin < end || h <= start);
}

/* --- training and the commitment ------------------------------------------------------------ */

/* This worker's state to train round r from: in memory, or the post state
 * of the round before from the store, or fresh (fresh: the chain holds no
 * commitment of the worker in round r - 1, so the state must restart). */
static gd_status gd_member_worker_for(gd_member *n, uint64_t r, bool fresh) {
    const Gonka__Diloco__V1__Member *me = gd_member_lookup(n, n->address);
    uint32_t rank = me ? me->rank : 0;
    if (!fresh && !n->have_w) {
        /* After a restart: the post state of round r - 1 from the store. */
        uint32_t segs = n->engine.rc.diloco.inner_steps / n->engine.rc.diloco.segment_steps;
        gd_buf b = {0};
        gd_worker_desc desc;
        gd_status s = gd_artifact_get(&n->store, GD_ARTIFACT_STATE, n->o.run, r - 1, segs + 1,
                                      (size_t)312 + 16 * n->engine.n, &b);
        if (s == GD_OK)
            s = gd_worker_state_parse(gd_trainer_pool(n->engine.trainer), &n->w, &desc, b.data,
                                      b.len, &n->engine.tag, n->engine.n);
        gd_buf_free(&b);
        if (s != GD_OK)
            return gd_fail_context(s, "this worker's state after round %" PRIu64, r - 1);
        n->have_w = true;
    }
    if (!n->have_w) {
        GD_TRY(gd_engine_worker_init(&n->engine, &n->w, n->address, rank));
        n->have_w = true;
    }
    n->w.rank = rank;
    return GD_OK;
}

/* A worker state a round left half-trained: reloaded before the next one. */
static void gd_member_drop_worker(gd_member *n) {
    if (n->have_w)
        gd_worker_state_free(&n->w);
    n->have_w = false;
}

/* S_r, what round r trains from (docs/protocol.md, "A round"): G_r of the
 * current round; or with overlap, for a worker whose commitment of r - 1
 * the chain holds, G_{r-1} - Δ̂_{w,r-1} from its own payload of r - 1,
 * built in own. *fresh: the chain holds no commitment of r - 1. */
static gd_status gd_member_round_start(gd_member *n, uint64_t r, gd_global_state *own,
                                       const gd_global_state **start, bool *fresh) {
    Gonka__Diloco__V1__QueryRoundResponse *prev = NULL;
    if (r > 0) {
        gd_status s = n->chain.iface->query_round(n->chain.ctx, n->o.run, r - 1, &prev);
        if (s != GD_OK && s != GD_ERR_NOT_FOUND)
            return s;
    }
    const Gonka__Diloco__V1__Commitment *pc = gd_commitment_in(prev, n->address);
    *fresh = pc == NULL;
    gd_status s = gd_member_worker_for(n, r, *fresh);
    const Gonka__Diloco__V1__Round *cur = gd_member_round(n);
    uint8_t hash[32];
    if (s == GD_OK && !gd_engine_overlapped(&n->engine, r, pc != NULL)) {
        s = cur && cur->index == r ? gd_start_hash(n, hash)
                                   : gd_fail(GD_ERR_NOT_FOUND, "round %" PRIu64 " is not open", r);
        if (s == GD_OK)
            s = gd_member_global_at(n, r, hash);
        *start = &n->g;
    } else if (s == GD_OK) {
        const gd_global_state *g_prev = NULL;
        gd_buf payload = {0};
        s = prev->round && prev->round->start_state_hash.len == 32
                ? gd_member_global_view(n, r - 1, prev->round->start_state_hash.data, &g_prev)
                : gd_fail(GD_ERR_NOT_FOUND, "round %" PRIu64 " has no start state hash", r - 1);
        if (s == GD_OK)
            s = gd_artifact_get(&n->store, GD_ARTIFACT_PAYLOAD, n->o.run, r - 1, 0,
                                GD_MEMBER_PAYLOAD_MAX, &payload);
        if (s == GD_OK)
            s = gd_engine_overlap_start(&n->engine, r, n->address, g_prev, payload.data,
                                        payload.len, pc->payload_root.data, pc->payload_leaves,
                                        own);
        gd_buf_free(&payload);
        *start = own;
    }
    if (prev)
        protobuf_c_message_free_unpacked(&prev->base, NULL);
    return s;
}

/* Payload, transcript, segment traces, states and the commitment itself,
 * durable before the commitment is sent. */
static gd_status gd_member_store_round(gd_member *n, uint64_t r) {
    const gd_trained_round *t = &n->trained;
    gd_artifact_store *st = &n->store;
    GD_TRY(gd_artifact_put(st, GD_ARTIFACT_PAYLOAD, n->o.run, r, 0, t->payload.data,
                           t->payload.len));
    GD_TRY(gd_artifact_put(st, GD_ARTIFACT_TRANSCRIPT, n->o.run, r, 0, t->transcript.data,
                           t->transcript.len));
    if (t->r.traces == NULL)
        return gd_fail(GD_ERR_INVALID, "round %" PRIu64 " was trained without its traces", r);
    GD_TRY(gd_artifact_put(st, GD_ARTIFACT_TRACES, n->o.run, r, 0, t->r.traces,
                           (size_t)t->segments * GD_DILOCO_HASH_LEN));
    for (uint32_t leaf = 0; leaf <= t->segments + 1; leaf++) {
        if (leaf == t->segments)
            continue; /* leaf S is leaf S + 1 with the old residual: never re-executed from */
        const gd_worker_state *w = leaf < t->segments ? &t->starts[leaf] : &n->w;
        gd_buf b = {0};
        gd_status s = gd_engine_state_file(&n->engine, r, w, leaf, t->segments, &b);
        if (s == GD_OK)
            s = gd_artifact_put(st, GD_ARTIFACT_STATE, n->o.run, r, leaf, b.data, b.len);
        gd_buf_free(&b);
        GD_TRY(s);
    }
    gd_any msg = {{0}, {0}};
    gd_status s = gd_diloco_msg_commit_round(&msg, n->address, &t->commit);
    if (s == GD_OK)
        s = gd_artifact_put(st, GD_ARTIFACT_COMMIT, n->o.run, r, 0, msg.value.data,
                            msg.value.len);
    gd_any_free(&msg);
    return s;
}

/* A progress line per segment, and the status's inner step and loss. */
static void gd_member_on_segment(void *ctx, uint64_t round, uint32_t segment, uint32_t segments,
                                 double loss) {
    gd_member *n = ctx;
    GD_LOG_INFO("node", "round %" PRIu64 ": segment %u/%u, loss %.4f", round, segment + 1,
                segments, loss);
    pthread_mutex_lock(&n->mu);
    n->stats.loss = loss;
    n->stats.inner_step += n->engine.rc.diloco.segment_steps;
    pthread_mutex_unlock(&n->mu);
}

/* A trained round (taken): its files durable, then the journal says so:
 * for this round, or ahead for the round after the journal's. */
static gd_status gd_member_trained(gd_member *n, uint64_t r, bool ahead, gd_trained_round *t) {
    gd_trained_round_free(&n->trained);
    n->trained = *t;
    memset(t, 0, sizeof *t);
    n->have_trained = true;
    GD_TRY(gd_member_store_round(n, r));
    /* In its window the journal moves to round r; ahead it stays at r - 1,
     * whose own fields it keeps. */
    n->journal = gd_journal_at(&n->journal, ahead ? r - 1 : r);
    if (ahead) {
        n->journal.ahead = true;
    } else {
        n->journal.trained = true;
        n->journal.ahead = n->journal.aggregated = false;
    }
    GD_TRY(gd_journal_save(&n->store, &n->journal));
    const gd_worker_round *wr = &n->trained.r;
    pthread_mutex_lock(&n->mu);
    n->stats.inner_step = n->w.step;
    n->stats.loss = n->trained.mean_loss;
    n->stats.tokens_per_s = wr->seconds > 0 ? (double)wr->tokens / wr->seconds : 0;
    pthread_mutex_unlock(&n->mu);
    GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " trained%s: loss %.4f, %.0f "
                        "tokens/s, payload %zu bytes",
                n->view.view.height, r, ahead ? " ahead" : "", n->trained.mean_loss,
                n->stats.tokens_per_s, n->trained.payload.len);
    return GD_OK;
}

/* Starts training round r: its start, the worker's state, the log line;
 * through the engine's job, or at once through a stand-in trainer (the
 * test-only adversaries' seam), whose round is then in *whole. */
static gd_status gd_member_train_begin(gd_member *n, uint64_t r, bool ahead,
                                       gd_trained_round *whole, bool *have_whole) {
    *have_whole = false;
    bool fresh = true;
    gd_global_state own;
    memset(&own, 0, sizeof own);
    const gd_global_state *start = NULL;
    gd_status s = gd_member_round_start(n, r, &own, &start, &fresh);
    if (s == GD_OK) {
        GD_LOG_INFO("node", "height %" PRId64 ": training round %" PRIu64 "%s (%u steps%s%s)",
                    n->view.view.height, r, ahead ? " ahead" : "",
                    n->engine.rc.diloco.inner_steps, fresh ? ", fresh optimizer state" : "",
                    start == &own ? ", overlapped start" : "");
        pthread_mutex_lock(&n->mu);
        n->stats.inner_step = n->w.step;
        pthread_mutex_unlock(&n->mu);
        n->engine.rc.diloco.on_segment = gd_member_on_segment;
        n->engine.rc.diloco.on_segment_ctx = n;
        n->engine.rc.diloco.stop = n->stop;
        s = gd_member_before_compute(n);
    }
    if (s == GD_OK && n->o.train != NULL) {
        s = n->o.train(&n->engine, r, start, fresh, &n->w, whole);
        *have_whole = s == GD_OK;
    } else if (s == GD_OK) {
        s = gd_engine_job_begin(&n->engine, r, start, fresh, &n->w, &n->job);
    }
    gd_global_state_free(&own);
    return s;
}

/* Trains round r: the current round in its window, all of it; or, with
 * overlap, the next one ahead (a), a segment at a time until something
 * else is due (it stays due). A round half-trained when the node stops is
 * trained again from its start after a restart. */
static gd_status gd_duty_train(gd_member *n, const gd_action *a) {
    uint64_t r = a->round;
    GD_TRY(gd_member_engine(n));
    const Gonka__Diloco__V1__Round *cur = gd_member_round(n);
    bool ahead = cur == NULL || cur->index != r;
    if (n->job.active && n->job.round != r) {
        gd_engine_job_free(&n->job);
        gd_member_drop_worker(n);
    }
    gd_trained_round t;
    memset(&t, 0, sizeof t);
    gd_status s = GD_OK;
    /* A job resumed after other duties reloads the worker's state into the
     * trainer they may have used; within one call the trainer is its own. */
    bool reload = n->job.active;
    if (!n->job.active) {
        bool whole = false;
        s = gd_member_train_begin(n, r, ahead, &t, &whole);
        if (s == GD_OK && whole)
            return gd_member_trained(n, r, ahead, &t);
    } else {
        s = gd_member_before_compute(n);
    }
    bool done = false;
    while (s == GD_OK && !done) {
        s = gd_engine_job_segment(&n->engine, &n->job, &n->w, reload, &done);
        reload = false;
        if (s == GD_OK && !done && ahead && gd_member_others_due(n, a)) {
            GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " ahead: paused after "
                                "segment %u/%u for other duties",
                        n->view.view.height, r, n->job.run.done, n->job.run.segments);
            return GD_OK;
        }
    }
    if (s != GD_OK) {
        gd_engine_job_free(&n->job);
        gd_member_drop_worker(n);
        return s;
    }
    gd_engine_job_take(&n->job, &t);
    return gd_member_trained(n, r, ahead, &t);
}

/* The commitment as stored with the round's files (after a restart): the
 * message the node would have sent, its loss figures included, refused
 * unless it is this node's for this run and round. */
static gd_status gd_commit_from_store(gd_member *n, uint64_t r, gd_any *msg) {
    gd_buf b = {0};
    GD_TRY(gd_artifact_get(&n->store, GD_ARTIFACT_COMMIT, n->o.run, r, 0, 4096, &b));
    Gonka__Diloco__V1__MsgCommitRound *m =
        gonka__diloco__v1__msg_commit_round__unpack(NULL, b.len, b.data);
    gd_status s = m != NULL ? gd_diloco_msg_commit_round_check(m)
                            : gd_fail(GD_ERR_PARSE, "the stored commitment of round %" PRIu64
                                                    " does not decode",
                                      r);
    if (s == GD_OK && (m->run != n->o.run || m->round != r ||
                       strcmp(m->participant, n->address) != 0))
        s = gd_fail(GD_ERR_INVALID, "the stored commitment of round %" PRIu64 " is another's",
                    r);
    if (m)
        gonka__diloco__v1__msg_commit_round__free_unpacked(m, NULL);
    if (s == GD_OK) {
        snprintf(msg->type_url, sizeof msg->type_url, "%s", GD_DILOCO_MSG_COMMIT_ROUND);
        msg->value = b;
        return GD_OK;
    }
    gd_buf_free(&b);
    return s;
}

static gd_status gd_duty_commit(gd_member *n, uint64_t r, gd_any *msg, bool *sent) {
    if (n->have_trained && n->trained.commit.round == r)
        GD_TRY(gd_diloco_msg_commit_round(msg, n->address, &n->trained.commit));
    else
        GD_TRY(gd_commit_from_store(n, r, msg));
    *sent = true;
    return GD_OK;
}

static gd_status gd_report_state(gd_member *n, const gd_action *a,
                                 const uint8_t randomness[GD_DILOCO_HASH_LEN],
                                 const Gonka__Diloco__V1__Commitment *c, gd_avail_state *st);

static gd_status gd_duty_report(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    GD_TRY(gd_member_engine(n));
    const gd_buf *bytes = NULL;
    gd_status s = gd_member_round_payload(n, a->target, &bytes);
    if (s == GD_ERR_PENDING)
        return GD_OK; /* still coming: a later step reports it */
    if (s != GD_OK) {
        gd_member_error(n, "height %" PRId64 ": report on %s: %s", n->view.view.height, a->target,
                      gd_error_detail());
        return s == GD_ERR_NOMEM ? s : GD_OK;
    }
    const Gonka__Diloco__V1__Round *r = gd_member_round(n);
    const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, a->target);
    if (r->verify_randomness.len != 32)
        return GD_OK;
    /* The state sample: a target that does not serve its states (yet)
     * gets a report without it once the window runs short, so its payload
     * still counts (and its lateness too). */
    gd_avail_state st = {0};
    bool sampled = false;
    s = gd_report_state(n, a, r->verify_randomness.data, c, &st);
    if (s == GD_ERR_NOMEM)
        return s;
    if (s == GD_OK) {
        sampled = true;
    } else if (gd_can_wait(n, n->view.view.round.windows.verify_start,
                           n->view.view.round.windows.open_start)) {
        GD_LOG_DEBUG("node", "height %" PRId64 ": report on %s waits for its states: %s",
                     n->view.view.height, a->target, gd_error_detail());
        gd_avail_state_free(&st);
        return GD_OK;
    } else {
        gd_member_error(n, "height %" PRId64 ": report on %s without its states: %s",
                        n->view.view.height, a->target, gd_error_detail());
    }
    gd_payload p;
    s = gd_payload_parse(&p, bytes->data, bytes->len, NULL);
    if (s != GD_OK) {
        gd_avail_state_free(&st);
        return s;
    }
    gd_diloco_chunk_proof chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
    gd_buf wire[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
    uint32_t count = 0;
    s = gd_avail_prove(&p, c->payload_leaves, r->verify_randomness.data, a->target, n->address,
                       n->ans.run->run->spec->avail_chunks, chunks, wire, &count);
    if (s == GD_OK)
        s = gd_diloco_msg_report_availability(msg, n->address, n->o.run, a->round, a->target,
                                              chunks, count, sampled ? &st.proof : NULL);
    for (size_t i = 0; i < GD_DILOCO_AVAIL_CHUNKS_MAX; i++)
        gd_buf_free(&wire[i]);
    gd_payload_free(&p);
    gd_avail_state_free(&st);
    *sent = s == GD_OK;
    return s;
}

/* --- checks and re-checks ----------------------------------------------------------------- */

static const gd_view_check *gd_view_check_of(const gd_member *n, const char *target,
                                             uint32_t check) {
    const gd_round_view *r = &n->view.view.round;
    for (size_t i = 0; i < r->n_checks; i++)
        if (strcmp(r->checks[i].target, target) == 0 && r->checks[i].check == check)
            return &r->checks[i];
    return NULL;
}

/* One artifact of the target into body (and its proof, for a chunk, into
 * proof; NULL otherwise). */
static gd_status gd_fetch_into(gd_member *n, const char *target, const gd_artifact_req *req,
                               size_t max, gd_buf *body, gd_buf *proof) {
    gd_artifact_answer a;
    GD_TRY(gd_member_fetch(n, target, req, max, &a));
    *body = a.body;
    a.body = (gd_buf){0};
    if (proof != NULL) {
        *proof = a.proof;
        a.proof = (gd_buf){0};
    }
    gd_artifact_answer_free(&a);
    return GD_OK;
}

/* A report's state sample (plugin/member/avail_proof.h): the target's transcript,
 * then the drawn chunk of the drawn segment start, as a validator fetches
 * them. */
static gd_status gd_report_state(gd_member *n, const gd_action *a,
                                 const uint8_t randomness[GD_DILOCO_HASH_LEN],
                                 const Gonka__Diloco__V1__Commitment *c, gd_avail_state *st) {
    uint32_t segs = c->segment_count;
    if (c->transcript_root.len != GD_DILOCO_HASH_LEN || segs == 0 ||
        segs > n->engine.rc.diloco.inner_steps)
        return gd_fail(GD_ERR_INVALID, "%s's commitment has no states to sample", a->target);
    gd_buf transcript = {0}, body = {0}, proof = {0};
    gd_artifact_req req = {.kind = GD_REQ_TRANSCRIPT, .run = n->o.run, .round = a->round};
    gd_status s = gd_fetch_into(n, a->target, &req, (size_t)(segs + 2) * GD_WORKER_DESC_BYTES,
                                &transcript, NULL);
    if (s == GD_OK)
        s = gd_avail_state_begin(st, randomness, a->target, n->address, c->transcript_root.data,
                                 segs, transcript.data, transcript.len);
    if (s == GD_OK) {
        req = (gd_artifact_req){.kind = GD_REQ_STATE_CHUNK, .run = n->o.run, .round = a->round,
                                .leaf = st->sample.leaf, .chunk = st->chunk};
        s = gd_fetch_into(n, a->target, &req, (size_t)16 * n->engine.rc.diloco.chunk_elems, &body,
                          &proof);
    }
    if (s == GD_OK)
        s = gd_avail_state_finish(st, c->transcript_root.data, segs, &body, &proof);
    gd_buf_free(&transcript);
    gd_buf_free(&body);
    gd_buf_free(&proof);
    return s;
}

/* Every answer gd_check_fetch takes from the target, in one list. */
typedef struct gd_check_requests {
    gd_artifact_req req[6];
    size_t max[6], n;
} gd_check_requests;

static void gd_check_requests_of(const gd_member *n, const gd_check_input *in, bool overlapped,
                                 size_t state_max, size_t chunk_max, gd_check_requests *r) {
    uint32_t segs = in->commitment->segment_count;
    r->n = 0;
    r->req[r->n] = (gd_artifact_req){.kind = GD_REQ_TRANSCRIPT, .run = n->o.run,
                                     .round = in->round};
    r->max[r->n++] = (size_t)(segs + 2) * GD_WORKER_DESC_BYTES;
    if (in->prev) {
        r->req[r->n] = (gd_artifact_req){.kind = GD_REQ_TRANSCRIPT, .run = n->o.run,
                                         .round = in->round - 1};
        r->max[r->n++] = (size_t)(in->prev->segment_count + 2) * GD_WORKER_DESC_BYTES;
    }
    if (in->segment < segs) {
        r->req[r->n] = (gd_artifact_req){.kind = GD_REQ_STATE, .run = n->o.run,
                                         .round = in->round, .leaf = in->segment,
                                         .first_bytes = state_max};
        r->max[r->n++] = state_max;
    }
    r->req[r->n] = (gd_artifact_req){.kind = GD_REQ_STATE_CHUNK, .run = n->o.run,
                                     .round = in->round, .leaf = 0, .chunk = in->chunk};
    r->max[r->n++] = chunk_max;
    r->req[r->n] = r->req[r->n - 1];
    r->req[r->n].leaf = segs + 1;
    r->max[r->n++] = chunk_max;
    if (overlapped) {
        r->req[r->n] = (gd_artifact_req){.kind = GD_REQ_PAYLOAD_CHUNK, .run = n->o.run,
                                         .round = in->round - 1, .chunk = in->chunk};
        r->max[r->n++] = gd_codec_chunk_bound(&n->engine.rc.diloco.codec,
                                              n->engine.rc.diloco.chunk_elems);
    }
}

/* Asks for every answer of r at once: GD_OK once all are in (or when
 * fetches run on the step), GD_ERR_PENDING while one is still coming, so
 * the check's transfers overlap and a step never waits. */
static gd_status gd_check_ready(gd_member *n, const char *target, const gd_check_requests *r) {
    gd_status first = GD_OK;
    for (size_t i = 0; i < r->n; i++) {
        gd_status s = gd_member_fetch_ready(n, target, &r->req[i], r->max[i]);
        if (s != GD_OK && s != GD_ERR_PENDING)
            return s;
        if (first == GD_OK)
            first = s;
    }
    return first == GD_OK ? GD_OK : gd_fail(GD_ERR_PENDING, "fetching check %s's evidence",
                                             target);
}

static gd_status gd_check_take(gd_member *n, const gd_check_input *in, bool overlapped,
                               size_t state_max, size_t chunk_max, gd_check_evidence *ev);

/* Everything the check needs from the target (plugin/member/round_engine.h: the
 * drawn segment's start state, one chunk of the start and post states,
 * and for an overlapped round the drawn chunk of its payload of the round
 * before); a fetch that fails is the status returned (the caller decides
 * between waiting and UNAVAILABLE). */
static gd_status gd_check_fetch(gd_member *n, const gd_check_input *in, bool overlapped,
                                gd_check_evidence *ev) {
    /* The segment's start without its residual (leaf 0's root stands in). */
    size_t state_max = (size_t)GD_WORKER_DESC_BYTES + 12 * n->engine.n;
    size_t chunk_max = (size_t)16 * n->engine.rc.diloco.chunk_elems;
    gd_check_requests all;
    gd_check_requests_of(n, in, overlapped, state_max, chunk_max, &all);
    GD_TRY(gd_check_ready(n, in->target, &all));
    gd_status s = gd_check_take(n, in, overlapped, state_max, chunk_max, ev);
    /* Answers not taken after one failed would be stale at the next try. */
    for (size_t i = 0; s != GD_OK && i < all.n; i++)
        gd_member_fetch_drop(n, in->target, &all.req[i], all.max[i]);
    return s;
}

/* gd_check_fetch's answers, taken in order; the first failure stops it. */
static gd_status gd_check_take(gd_member *n, const gd_check_input *in, bool overlapped,
                               size_t state_max, size_t chunk_max, gd_check_evidence *ev) {
    uint32_t segs = in->commitment->segment_count;
    const gd_buf *payload = NULL;
    gd_artifact_req req = {.kind = GD_REQ_TRANSCRIPT, .run = n->o.run, .round = in->round};
    GD_TRY(gd_fetch_into(n, in->target, &req, (size_t)(segs + 2) * GD_WORKER_DESC_BYTES,
                         &ev->transcript, NULL));
    if (in->prev) {
        gd_artifact_req prev = req;
        prev.round = in->round - 1;
        GD_TRY(gd_fetch_into(n, in->target, &prev,
                             (size_t)(in->prev->segment_count + 2) * GD_WORKER_DESC_BYTES,
                             &ev->prev_transcript, NULL));
    }
    if (in->segment < segs) {
        req = (gd_artifact_req){.kind = GD_REQ_STATE, .run = n->o.run, .round = in->round,
                                .leaf = in->segment, .first_bytes = state_max};
        GD_TRY(gd_fetch_into(n, in->target, &req, state_max, &ev->segment_state, NULL));
    }
    req = (gd_artifact_req){.kind = GD_REQ_STATE_CHUNK, .run = n->o.run, .round = in->round,
                            .leaf = 0, .chunk = in->chunk};
    GD_TRY(gd_fetch_into(n, in->target, &req, chunk_max, &ev->start_chunk, &ev->start_proof));
    req.leaf = segs + 1;
    GD_TRY(gd_fetch_into(n, in->target, &req, chunk_max, &ev->post_chunk, &ev->post_proof));
    if (overlapped) {
        req = (gd_artifact_req){.kind = GD_REQ_PAYLOAD_CHUNK, .run = n->o.run,
                                .round = in->round - 1, .chunk = in->chunk};
        GD_TRY(gd_fetch_into(n, in->target, &req,
                             gd_codec_chunk_bound(&n->engine.rc.diloco.codec,
                                                  n->engine.rc.diloco.chunk_elems),
                             &ev->prev_payload_chunk, &ev->prev_payload_proof));
    }
    GD_TRY(gd_member_round_payload(n, in->target, &payload));
    ev->payload = payload->data;
    ev->payload_len = payload->len;
    return GD_OK;
}

/* The answer to a check of this node's own commitment: its own digest,
 * from the trace of the segment it kept while it trained and the
 * segment's end leaf, both stored with the round (no re-execution). */
static gd_status gd_member_own_answer(gd_member *n, const gd_action *a, const gd_view_check *vc,
                                      uint8_t digest[32]) {
    gd_buf traces = {0}, transcript = {0};
    gd_status s = gd_artifact_get(&n->store, GD_ARTIFACT_TRACES, n->o.run, a->round, 0,
                                  (size_t)GD_MMR_MAX_LEAVES * GD_DILOCO_HASH_LEN, &traces);
    if (s == GD_OK)
        s = gd_artifact_get(&n->store, GD_ARTIFACT_TRANSCRIPT, n->o.run, a->round, 0,
                            (size_t)(GD_MMR_MAX_LEAVES + 2) * GD_WORKER_DESC_BYTES, &transcript);
    size_t segments = traces.len / GD_DILOCO_HASH_LEN;
    if (s == GD_OK && (traces.len % GD_DILOCO_HASH_LEN != 0 || vc->segment >= segments ||
                       transcript.len != (segments + 2) * GD_WORKER_DESC_BYTES))
        s = gd_fail(GD_ERR_PARSE, "round %" PRIu64 "'s stored traces (%zu bytes) and transcript "
                    "(%zu bytes) do not hold segment %u", a->round, traces.len, transcript.len,
                    vc->segment);
    gd_worker_desc end = {0};
    if (s == GD_OK)
        s = gd_worker_desc_decode(&end, transcript.data + (size_t)(vc->segment + 1) *
                                             GD_WORKER_DESC_BYTES, GD_WORKER_DESC_BYTES);
    if (s == GD_OK) {
        uint8_t end_hash[32];
        gd_worker_desc_hash(&end, end_hash);
        gd_diloco_verdict_digest(digest, n->o.run, a->round, n->address, vc->segment,
                                 traces.data + (size_t)vc->segment * GD_DILOCO_HASH_LEN, end_hash);
    }
    gd_buf_free(&traces);
    gd_buf_free(&transcript);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "own digest of check %u", a->check);
}

/* The answer to a check: kept from its seal for its reveal, recomputed
 * after a restart. *ready is false when the target could not be reached
 * and the window has blocks left to try again. */
static gd_status gd_member_answer_for(gd_member *n, const gd_action *a, bool recheck,
                                      const gd_member_answer **out, bool *ready) {
    *ready = false;
    for (size_t i = 0; i < n->n_answers; i++) {
        const gd_member_answer *x = &n->answers[i];
        if (x->round == a->round && x->check == a->check && x->recheck == recheck &&
            strcmp(x->target, a->target) == 0) {
            *out = x;
            *ready = true;
            return GD_OK;
        }
    }
    const gd_view_check *vc = gd_view_check_of(n, a->target, a->check);
    if (vc != NULL && vc->own && !recheck) {
        uint8_t digest[32];
        GD_TRY(gd_member_own_answer(n, a, vc, digest));
        gd_member_answer *x = &n->answers[n->n_answers < GD_MEMBER_ANSWERS ? n->n_answers++
                                                                       : GD_MEMBER_ANSWERS - 1];
        *x = (gd_member_answer){.round = a->round, .check = a->check, .recheck = false,
                                .verdict = GD_VERDICT_PASS};
        snprintf(x->target, sizeof x->target, "%s", a->target);
        memcpy(x->digest, digest, 32);
        *out = x;
        *ready = true;
        return GD_OK;
    }
    GD_TRY(gd_member_engine(n));
    const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, a->target);
    const Gonka__Diloco__V1__WeightedMember *wm = gd_weighted_in(gd_member_round(n), a->target);
    if (vc == NULL || c == NULL || wm == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "check %u of %s is not in the round", a->check,
                       a->target);
    uint8_t start[32];
    GD_TRY(gd_start_hash(n, start));
    GD_TRY(gd_member_global_at(n, a->round, start));
    Gonka__Diloco__V1__QueryRoundResponse *prev_round = NULL;
    if (a->round > 0) {
        gd_status s = n->chain.iface->query_round(n->chain.ctx, n->o.run, a->round - 1,
                                                  &prev_round);
        if (s != GD_OK && s != GD_ERR_NOT_FOUND)
            return s;
    }
    gd_check_input in = {.round = a->round, .target = a->target, .rank = wm->rank,
                         .commitment = c, .prev = gd_commitment_in(prev_round, a->target),
                         .segment = vc->segment, .step = vc->step, .chunk = vc->chunk};
    /* An overlapped round started from G_{r-1} - Δ̂: G_{r-1}'s chunk is the
     * chain's (this node's or peers', proved by its hash), after G_r is held
     * (taking G_r may replace what the view points into). */
    bool overlapped = gd_engine_overlapped(&n->engine, a->round, in.prev != NULL);
    gd_status s = GD_OK;
    size_t lo = 0, count = 0;
    if (overlapped &&
        gd_values_chunk_range(n->engine.n, n->engine.rc.diloco.chunk_elems, vc->chunk, &lo,
                              &count)) {
        const Gonka__Diloco__V1__Round *pr = prev_round ? prev_round->round : NULL;
        const gd_global_state *g_prev = NULL;
        s = pr && pr->start_state_hash.len == 32
                ? gd_member_global_view(n, a->round - 1, pr->start_state_hash.data, &g_prev)
                : gd_fail(GD_ERR_NOT_FOUND, "round %" PRIu64 " has no start state hash",
                          a->round - 1);
        if (s == GD_OK)
            in.prev_global_chunk = g_prev->params + lo;
    }
    gd_check_evidence ev;
    memset(&ev, 0, sizeof ev);
    gd_check_answer ans;
    memset(&ans, 0, sizeof ans);
    if (s != GD_OK) {
        if (prev_round)
            protobuf_c_message_free_unpacked(&prev_round->base, NULL);
        return s;
    }
    s = gd_check_fetch(n, &in, overlapped, &ev);
    const gd_round_windows *w = &n->view.view.round.windows;
    int64_t from = recheck ? w->dispute_start : w->verify_start;
    int64_t end = recheck ? w->dispute_open_start : w->open_start;
    if (s == GD_ERR_NOMEM) {
        /* local: stop */
    } else if (s != GD_OK) {
        s = GD_OK;
        ans.verdict = GD_VERDICT_UNAVAILABLE;
        if (gd_can_wait(n, from, end)) {
            ans.verdict = GD_VERDICT_UNSPECIFIED; /* try again next block */
            GD_LOG_DEBUG("node", "height %" PRId64 ": check %u of %s waits: %s",
                         n->view.view.height, a->check, a->target, gd_error_detail());
        } else {
            gd_member_error(n, "height %" PRId64 ": check %u of %s: UNAVAILABLE: %s",
                          n->view.view.height, a->check, a->target, gd_error_detail());
        }
    } else {
        gd_engine_check_fn check = n->o.check ? n->o.check : gd_engine_check;
        s = gd_member_before_compute(n);
        if (s == GD_OK)
            s = check(&n->engine, &in, &ev, &n->g, &ans);
        if (s == GD_OK && ans.verdict == GD_VERDICT_FAIL)
            GD_LOG_WARN("node", "height %" PRId64 ": check %u of %s FAILS: %s",
                        n->view.view.height, a->check, a->target, ans.why);
    }
    /* The big buffers serve the next check's fetches. */
    gd_member_recycle(n, &ev.segment_state);
    gd_member_recycle(n, &ev.start_chunk);
    gd_member_recycle(n, &ev.post_chunk);
    gd_member_recycle(n, &ev.prev_payload_chunk);
    gd_check_evidence_free(&ev);
    if (prev_round)
        protobuf_c_message_free_unpacked(&prev_round->base, NULL);
    if (s != GD_OK || ans.verdict == GD_VERDICT_UNSPECIFIED)
        return s;
    gd_member_answer *x = &n->answers[n->n_answers < GD_MEMBER_ANSWERS ? n->n_answers++
                                                                   : GD_MEMBER_ANSWERS - 1];
    *x = (gd_member_answer){.round = a->round, .check = a->check, .recheck = recheck,
                          .verdict = ans.verdict};
    snprintf(x->target, sizeof x->target, "%s", a->target);
    memcpy(x->digest, ans.digest, 32);
    if (ans.verdict == GD_VERDICT_UNAVAILABLE)
        memset(x->digest, 0, 32);
    *out = x;
    *ready = true;
    return GD_OK;
}

static gd_status gd_duty_answer(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    bool recheck = a->kind == GD_ACT_RECHECK || a->kind == GD_ACT_REVEAL_RECHECK;
    bool seal = a->kind == GD_ACT_CHECK || a->kind == GD_ACT_RECHECK;
    const gd_member_answer *x = NULL;
    bool ready = false;
    GD_TRY(gd_member_answer_for(n, a, recheck, &x, &ready));
    if (!ready)
        return GD_OK;
    bool own = !recheck && strcmp(a->target, n->address) == 0;
    gd_diloco_seal_kind kind = recheck ? GD_SEAL_RECHECK : own ? GD_SEAL_OWN : GD_SEAL_VERDICT;
    uint8_t salt[32], sealed[32];
    gd_member_salt(n, salt, kind, a->round, a->target, a->check);
    gd_status s;
    if (seal) {
        gd_diloco_verdict_seal(sealed, kind, n->address, x->verdict, x->digest, salt);
        s = recheck ? gd_diloco_msg_dispute_sealed(msg, n->address, n->o.run, a->round, a->target,
                                                   a->check, sealed)
                    : gd_diloco_msg_submit_verdict_sealed(msg, n->address, n->o.run, a->round,
                                                          a->target, a->check, sealed);
        if (s == GD_OK && !own) {
            pthread_mutex_lock(&n->mu);
            n->stats.checks[x->verdict & 3]++;
            pthread_mutex_unlock(&n->mu);
        }
    } else {
        s = recheck ? gd_diloco_msg_dispute_revealed(msg, n->address, n->o.run, a->round,
                                                     a->target, a->check, x->verdict, x->digest,
                                                     salt)
                    : gd_diloco_msg_submit_verdict_revealed(msg, n->address, n->o.run, a->round,
                                                            a->target, a->check, x->verdict,
                                                            x->digest, salt);
    }
    *sent = s == GD_OK;
    return s;
}

/* --- aggregation and attestation -------------------------------------------------------------- */

static gd_status gd_duty_aggregate(gd_member *n, uint64_t r) {
    GD_TRY(gd_member_engine(n));
    uint8_t start[32];
    GD_TRY(gd_start_hash(n, start));
    GD_TRY(gd_member_global_at(n, r, start));
    const gd_round_view *rv = &n->view.view.round;
    gd_engine_contribution *cs = calloc(rv->n_aggregation_set + 1, sizeof *cs);
    if (cs == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < rv->n_aggregation_set; i++) {
        const char *who = rv->aggregation_set[i];
        const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, who);
        const gd_buf *bytes = NULL;
        s = c ? gd_member_round_payload(n, who, &bytes)
              : gd_fail(GD_ERR_NOT_FOUND, "%s is aggregated but has no commitment", who);
        if (s == GD_OK)
            cs[i] = (gd_engine_contribution){.address = who, .tokens = c->tokens,
                                             .payload = bytes->data, .payload_len = bytes->len,
                                             .root = c->payload_root.data,
                                             .leaves = c->payload_leaves};
    }
    if (s != GD_OK) {
        free(cs);
        gd_member_error(n, "height %" PRId64 ": aggregating round %" PRIu64 ": %s",
                      n->view.view.height, r, gd_error_detail());
        return s == GD_ERR_NOMEM ? s : GD_OK; /* a payload may come later in the window */
    }
    if (n->have_next)
        gd_global_state_free(&n->next);
    n->have_next = false;
    s = gd_global_state_copy(&n->next, &n->g);
    if (s == GD_OK) {
        n->have_next = true;
        /* Nothing to aggregate leaves G as it was (protocol.md, section 7). */
        if (rv->n_aggregation_set > 0) {
            s = gd_member_before_compute(n);
            if (s == GD_OK)
                s = gd_engine_aggregate(&n->engine, r, cs, rv->n_aggregation_set, &n->next);
        }
    }
    free(cs);
    gd_buf file = {0};
    if (s == GD_OK)
        s = gd_member_global_file(n, &n->next, &file);
    if (s == GD_OK)
        s = gd_artifact_put(&n->store, GD_ARTIFACT_GLOBAL, n->o.run, r + 1, 0, file.data,
                            file.len);
    gd_buf_free(&file);
    if (s != GD_OK) {
        if (n->have_next)
            gd_global_state_free(&n->next);
        n->have_next = false;
        return s;
    }
    n->journal = gd_journal_at(&n->journal, r);
    n->journal.aggregated = true;
    GD_TRY(gd_journal_save(&n->store, &n->journal));
    gd_member_note_state(n, &n->next);
    uint8_t hash[32];
    GD_TRY(gd_engine_global_hash(&n->engine, &n->next, hash));
    GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " aggregated from %zu payloads: "
                        "state %02x%02x%02x%02x...",
                n->view.view.height, r, rv->n_aggregation_set, hash[0], hash[1], hash[2],
                hash[3]);
    return GD_OK;
}

/* G_{r+1}'s hash as this node aggregated it (from memory or the store). */
static gd_status gd_next_hash(gd_member *n, uint64_t r, uint8_t out[32]) {
    GD_TRY(gd_member_engine(n));
    if (n->have_next && n->have_g && n->g_round == r)
        return gd_engine_global_hash(&n->engine, &n->next, out);
    gd_buf b = {0};
    GD_TRY(gd_artifact_get(&n->store, GD_ARTIFACT_GLOBAL, n->o.run, r + 1, 0,
                           GD_GLOBAL_DESC_BYTES + 8 * n->engine.n, &b));
    gd_global_desc d;
    gd_status s = b.len >= GD_GLOBAL_DESC_BYTES
                      ? gd_global_desc_decode(&d, b.data, GD_GLOBAL_DESC_BYTES)
                      : gd_fail(GD_ERR_PARSE, "the stored G of round %" PRIu64 " is short", r + 1);
    gd_buf_free(&b);
    if (s == GD_OK)
        gd_global_desc_hash(&d, out);
    return s;
}

static gd_status gd_duty_attest(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    uint8_t hash[32], salt[32], sealed[32];
    GD_TRY(gd_next_hash(n, a->round, hash));
    gd_member_salt(n, salt, GD_SEAL_ATTEST, a->round, NULL, 0);
    gd_status s;
    if (a->kind == GD_ACT_SEAL_ATTEST) {
        gd_diloco_seal(sealed, GD_SEAL_ATTEST, n->address, hash, 32, salt);
        s = gd_diloco_msg_attest_round_sealed(msg, n->address, n->o.run, a->round, sealed);
    } else {
        s = gd_diloco_msg_attest_round_revealed(msg, n->address, n->o.run, a->round, hash, salt);
    }
    *sent = s == GD_OK;
    return s;
}

/* --- the rest ---------------------------------------------------------------------------------- */

static gd_status gd_duty_secret(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    uint8_t secret[32], sealed[32];
    gd_member_salt(n, secret, GD_SEAL_RANDOMNESS, a->round, NULL, 0);
    gd_status s;
    if (a->kind == GD_ACT_SEAL_SECRET) {
        gd_diloco_seal(sealed, GD_SEAL_RANDOMNESS, n->address, NULL, 0, secret);
        s = gd_diloco_msg_randomness_sealed(msg, n->address, n->o.run, a->round, sealed);
    } else {
        s = gd_diloco_msg_randomness_revealed(msg, n->address, n->o.run, a->round, secret);
    }
    gd_wipe(secret, sizeof secret);
    *sent = s == GD_OK;
    return s;
}

gd_status gd_member_duty(gd_member *n, const gd_action *a, gd_any *msgs, size_t cap,
                       size_t *n_msgs) {
    if (*n_msgs >= cap)
        return GD_OK;
    /* Built aside: a duty that computes sends the queue first
     * (gd_member_before_compute), which empties msgs under it. */
    gd_any one;
    gd_any *msg = &one;
    memset(msg, 0, sizeof *msg);
    bool sent = false;
    gd_status s = GD_OK;
    if (n->o.duty != NULL && n->o.duty(a, n->address, n->o.run, n->ans.round, msg, &sent)) {
        if (sent)
            msgs[(*n_msgs)++] = one;
        else
            gd_any_free(msg);
        return GD_OK;
    }
    switch (a->kind) {
    case GD_ACT_JOIN:
        s = gd_diloco_msg_join_run(msg, n->address, n->o.run, n->artifact_url, n->hw_class,
                                   &n->o.collateral);
        sent = s == GD_OK;
        break;
    case GD_ACT_SEAL_SECRET:
    case GD_ACT_REVEAL_SECRET: s = gd_duty_secret(n, a, msg, &sent); break;
    case GD_ACT_TRAIN: s = gd_duty_train(n, a); break;
    case GD_ACT_COMMIT: s = gd_duty_commit(n, a->round, msg, &sent); break;
    case GD_ACT_REPORT: s = gd_duty_report(n, a, msg, &sent); break;
    case GD_ACT_CHECK:
    case GD_ACT_REVEAL_VERDICT:
    case GD_ACT_RECHECK:
    case GD_ACT_REVEAL_RECHECK: s = gd_duty_answer(n, a, msg, &sent); break;
    case GD_ACT_AGGREGATE: s = gd_duty_aggregate(n, a->round); break;
    case GD_ACT_SEAL_ATTEST:
    case GD_ACT_REVEAL_ATTEST: s = gd_duty_attest(n, a, msg, &sent); break;
    case GD_ACT_CLAIM:
        s = gd_diloco_msg_claim_rewards(msg, n->address, n->o.run, a->epoch);
        sent = s == GD_OK;
        break;
    case GD_ACT_LEAVE:
        s = gd_diloco_msg_leave_run(msg, n->address, n->o.run);
        sent = s == GD_OK;
        break;
    default: break;
    }
    if (s != GD_OK && s != GD_ERR_NOMEM && s != GD_ERR_IO) {
        /* A duty that failed for a reason outside this node stays due. */
        gd_member_error(n, "height %" PRId64 ": %s round %" PRIu64 ": %s", n->view.view.height,
                      gd_action_names[a->kind], a->round, gd_error_detail());
        s = GD_OK;
        sent = false;
    }
    if (sent)
        msgs[(*n_msgs)++] = one;
    else
        gd_any_free(msg);
    return s;
}
