/* The training duties of a worker (plugin/member/member_internal.h): a
 * round trained through the round engine a segment at a time (ahead, with
 * overlap), its artifacts made durable, and its commitment. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

/* Leaf `leaf` of this worker's round r as its store holds it, opened for
 * reading a window at a time (*fd to close). The file is this node's own:
 * whatever keeps it from being read is its disk (GD_ERR_IO). */
static gd_status gd_member_own_state_open(gd_member *n, uint64_t r, uint32_t leaf, int *fd,
                                          gd_state_file_view *v) {
    char path[GD_ARTIFACT_PATH_MAX];
    *fd = -1;
    GD_TRY(gd_artifact_path(&n->store, path, sizeof path, GD_ARTIFACT_STATE, n->o.run, r, leaf));
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    gd_status s = *fd >= 0 && fstat(*fd, &st) == 0
                      ? gd_state_file_view_open_file(v, *fd, (uint64_t)st.st_size,
                                                     &n->engine.tag, n->engine.n)
                      : gd_fail(GD_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (s != GD_OK) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return gd_fail_context(GD_ERR_IO, "this worker's state of round %" PRIu64 ", leaf %u",
                               r, leaf);
    }
    return GD_OK;
}

/* This worker's rank in the run (0 before it is a member). */
static uint32_t gd_member_rank(gd_member *n) {
    const Gonka__Diloco__V1__Member *me = gd_member_lookup(n, n->address);
    return me ? me->rank : 0;
}

/* For a stand-in trainer, which takes the worker's state whole: the post
 * state of round r - 1 from the store, or fresh (fresh: the chain holds no
 * commitment of the worker in round r - 1, so the state must restart). */
static gd_status gd_member_worker_for(gd_member *n, uint64_t r, bool fresh) {
    uint32_t rank = gd_member_rank(n);
    if (!fresh && !n->have_w) {
        uint32_t segs = n->engine.rc.diloco.inner_steps / n->engine.rc.diloco.segment_steps;
        gd_buf b = {0};
        gd_worker_desc desc;
        gd_status s = gd_artifact_get(&n->store, &b, GD_ARTIFACT_STATE, n->o.run, r - 1,
                                      segs + 1, (size_t)312 + 16 * n->engine.n);
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

/* A round left half-trained: its job given up, and what it was writing
 * waited for. */
static void gd_member_drop_worker(gd_member *n) {
    gd_engine_job_free(&n->job);
    gd_start_writer_forget(&n->starts);
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
        gd_status s = n->chain.iface->query_round(n->chain.ctx, &prev, n->o.run, r - 1);
        if (s != GD_OK && s != GD_ERR_NOT_FOUND)
            return s;
    }
    const Gonka__Diloco__V1__Commitment *pc = gd_commitment_in(prev, n->address);
    *fresh = pc == NULL;
    gd_status s = n->o.train != NULL ? gd_member_worker_for(n, r, *fresh) : GD_OK;
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
        char path[GD_ARTIFACT_PATH_MAX];
        s = prev->round && prev->round->start_state_hash.len == 32
                ? gd_member_global_view(n, &g_prev, r - 1, prev->round->start_state_hash.data)
                : gd_fail(GD_ERR_NOT_FOUND, "round %" PRIu64 " has no start state hash", r - 1);
        if (s == GD_OK)
            s = gd_artifact_path(&n->store, path, sizeof path, GD_ARTIFACT_PAYLOAD, n->o.run,
                                 r - 1, 0);
        /* Its own payload of r - 1 read where it is stored, a chunk at a
         * time; S_r kept in memory, or in a file of round r's, as the
         * memory budget says of a round's start. */
        char dir[GD_ARTIFACT_PATH_MAX];
        if (s == GD_OK && !n->keep_params)
            s = gd_artifact_round_place(&n->store, dir, n->o.run, r);
        if (s == GD_OK)
            s = gd_engine_overlap_start_path(&n->engine, own, r, n->address, g_prev, path,
                                             pc->payload_root.data, pc->payload_leaves,
                                             n->keep_params ? NULL : dir);
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
    if (!t->r.payload.in_file) /* else encoded into the store already (the job's sink) */
        GD_TRY(gd_artifact_put_payload(st, n->o.run, r, &t->r.payload));
    GD_TRY(gd_artifact_put(st, GD_ARTIFACT_TRANSCRIPT, n->o.run, r, 0, t->transcript.data,
                           t->transcript.len));
    if (t->r.traces == NULL)
        return gd_fail(GD_ERR_INVALID, "round %" PRIu64 " was trained without its traces", r);
    GD_TRY(gd_artifact_put(st, GD_ARTIFACT_TRACES, n->o.run, r, 0, t->r.traces,
                           (size_t)t->segments * GD_DILOCO_HASH_LEN));
    /* The states: written as training reached them (the job's sink, the
     * start writer), unless a stand-in trainer kept them. */
    GD_TRY(gd_start_writer_drain(&n->starts));
    for (uint32_t leaf = 0; t->starts != NULL && leaf <= t->segments + 1; leaf++) {
        if (leaf == t->segments)
            continue; /* leaf S is leaf S + 1 with the old residual: never re-executed from */
        const gd_worker_state *w = leaf < t->segments ? &t->starts[leaf] : &n->w;
        gd_buf b = {0};
        gd_status s = gd_engine_state_file(&n->engine, &b, r, w, leaf, t->segments);
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
    gd_member_disk_stored(n);
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
    n->stats.inner_step = wr->descs ? wr->descs[wr->n_leaves - 1].step : 0;
    n->stats.loss = n->trained.mean_loss;
    size_t at = n->stats.n_losses++ % GD_MEMBER_LOSSES;
    n->stats.losses[at].round = r;
    n->stats.losses[at].loss = n->trained.mean_loss;
    n->stats.tokens_per_s = wr->seconds > 0 ? (double)wr->tokens / wr->seconds : 0;
    pthread_mutex_unlock(&n->mu);
    GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " trained%s: loss %.4f, %.0f "
                        "tokens/s, payload %zu bytes",
                n->view.view.height, r, ahead ? " ahead" : "", n->trained.mean_loss,
                n->stats.tokens_per_s, (size_t)n->trained.commit.payload_bytes);
    /* Its files are durable: the commitment's fields are all it keeps; the
     * next round reads the worker's state back from them. */
    gd_trained_round_shed(&n->trained);
    gd_member_drop_worker(n);
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
    gd_status s = gd_member_disk_room(n, r);
    if (s == GD_OK)
        s = gd_member_round_start(n, r, &own, &start, &fresh);
    if (s == GD_OK) {
        GD_LOG_INFO("node", "height %" PRId64 ": training round %" PRIu64 "%s (%u steps%s%s)",
                    n->view.view.height, r, ahead ? " ahead" : "",
                    n->engine.rc.diloco.inner_steps, fresh ? ", fresh optimizer state" : "",
                    start == &own ? ", overlapped start" : "");
        n->engine.rc.diloco.on_segment = gd_member_on_segment;
        n->engine.rc.diloco.on_segment_ctx = n;
        n->engine.rc.diloco.stop = n->stop;
        gd_member_memory_plan(n);
        s = gd_member_before_compute(n);
    }
    if (s == GD_OK && n->o.train != NULL) {
        /* The test-only stand-in trainers take G's params whole. */
        gd_global_state given;
        memset(&given, 0, sizeof given);
        if (start->params == NULL)
            s = gd_global_state_copy(&given, start);
        if (s == GD_OK)
            s = n->o.train(&n->engine, whole, r, start->params ? start : &given, fresh, &n->w);
        gd_global_state_free(&given);
        *have_whole = s == GD_OK;
    } else if (s == GD_OK) {
        /* The worker's state after r - 1 is read from its file a window at
         * a time as the trainer loads it. */
        uint32_t segs = n->engine.rc.diloco.inner_steps / n->engine.rc.diloco.segment_steps;
        int fd = -1;
        gd_state_file_view prev;
        if (!fresh)
            s = gd_member_own_state_open(n, r - 1, segs + 1, &fd, &prev);
        gd_engine_start_sink sink = gd_start_writer_sink(&n->starts);
        /* An overlapped start is the job's; G_r is borrowed (a round in
         * its window is trained whole before G changes). */
        if (s == GD_OK)
            s = gd_engine_job_begin(&n->engine, r, start == &own ? NULL : start,
                                    start == &own ? &own : NULL, fresh ? NULL : &prev,
                                    n->address, gd_member_rank(n), &sink, &n->job);
        if (fd >= 0)
            close(fd);
    }
    if (s == GD_OK) {
        pthread_mutex_lock(&n->mu);
        n->stats.inner_step = n->o.train ? n->w.step : gd_engine_job_step(&n->engine);
        pthread_mutex_unlock(&n->mu);
    }
    gd_global_state_free(&own);
    return s;
}

/* One segment of the job; with reload the state at its start is first
 * loaded again from its file (written at the boundary: the writer is
 * drained first), since other duties may have used the trainer. */
static gd_status gd_member_job_segment(gd_member *n, bool reload, bool *done) {
    if (!reload)
        return gd_engine_job_segment(&n->engine, &n->job, NULL, done);
    int fd = -1;
    gd_state_file_view v;
    memset(&v, 0, sizeof v);
    gd_status s = gd_start_writer_drain(&n->starts);
    if (s == GD_OK)
        s = gd_member_own_state_open(n, n->job.round, n->job.run.done, &fd, &v);
    gd_worker_state_source from = gd_state_file_view_source(&v);
    if (s == GD_OK)
        s = gd_engine_job_segment(&n->engine, &n->job, &from, done);
    if (fd >= 0)
        close(fd);
    return s;
}

/* Trains round r: the current round in its window, all of it; or, with
 * overlap, the next one ahead (a), a segment at a time until something
 * else is due (it stays due). A round half-trained when the node stops is
 * trained again from its start after a restart. */
gd_status gd_duty_train(gd_member *n, const gd_action *a) {
    uint64_t r = a->round;
    GD_TRY(gd_member_engine(n));
    const Gonka__Diloco__V1__Round *cur = gd_member_round(n);
    bool ahead = cur == NULL || cur->index != r;
    if (n->job.active && n->job.round != r) {
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
        s = gd_member_job_segment(n, reload, &done);
        reload = false;
        if (s == GD_OK && !done && ahead && gd_member_others_due(n, a)) {
            GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 " ahead: paused after "
                                "segment %u/%u for other duties",
                        n->view.view.height, r, n->job.run.done, n->job.run.segments);
            return GD_OK;
        }
    }
    if (s != GD_OK) {
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
    GD_TRY(gd_artifact_get(&n->store, &b, GD_ARTIFACT_COMMIT, n->o.run, r, 0, 4096));
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

gd_status gd_duty_commit(gd_member *n, uint64_t r, gd_any *msg, bool *sent) {
    if (n->have_trained && n->trained.commit.round == r)
        GD_TRY(gd_diloco_msg_commit_round(msg, n->address, &n->trained.commit));
    else
        GD_TRY(gd_commit_from_store(n, r, msg));
    *sent = true;
    return GD_OK;
}
