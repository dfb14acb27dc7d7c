/* A validator's checks and re-checks (plugin/member/member_internal.h): the
 * evidence fetched from the target, the re-execution through the round
 * engine (or a member's own answer from its stored traces), and the sealed
 * and revealed verdicts. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"

static const Gonka__Diloco__V1__WeightedMember *
gd_weighted_in(const Gonka__Diloco__V1__Round *r, const char *address) {
    for (size_t i = 0; r && i < r->n_members; i++)
        if (strcmp(r->members[i]->address, address) == 0)
            return r->members[i];
    return NULL;
}

static const gd_view_check *gd_view_check_of(const gd_member *n, const char *target,
                                             uint32_t check) {
    const gd_round_view *r = &n->view.view.round;
    for (size_t i = 0; i < r->n_checks; i++)
        if (strcmp(r->checks[i].target, target) == 0 && r->checks[i].check == check)
            return &r->checks[i];
    return NULL;
}

/* Every answer gd_check_fetch takes from the target, in one list. */
typedef struct gd_check_requests {
    gd_artifact_req req[6];
    size_t max[6], n;
} gd_check_requests;

/* The segment's start goes to its file (into), never to memory: 12 bytes
 * a parameter, read a window at a time by the re-execution. */
static void gd_check_requests_of(const gd_member *n, const gd_check_input *in, bool overlapped,
                                 size_t state_max, size_t chunk_max, const char *into,
                                 gd_check_requests *r) {
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
                                         .first_bytes = state_max, .into = into};
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
                               size_t state_max, size_t chunk_max, const char *into,
                               gd_check_evidence *ev);

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
    char into[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_check_state_place(&n->store, into, n->o.run, in->round, in->rank,
                                         in->segment));
    gd_check_requests all;
    gd_check_requests_of(n, in, overlapped, state_max, chunk_max, into, &all);
    GD_TRY(gd_check_ready(n, in->target, &all));
    gd_status s = gd_check_take(n, in, overlapped, state_max, chunk_max, into, ev);
    /* Answers not taken after one failed would be stale at the next try. */
    for (size_t i = 0; s != GD_OK && i < all.n; i++)
        gd_member_fetch_drop(n, in->target, &all.req[i], all.max[i]);
    return s;
}

/* gd_check_fetch's answers, taken in order; the first failure stops it. */
static gd_status gd_check_take(gd_member *n, const gd_check_input *in, bool overlapped,
                               size_t state_max, size_t chunk_max, const char *into,
                               gd_check_evidence *ev) {
    uint32_t segs = in->commitment->segment_count;
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
                                .leaf = in->segment, .first_bytes = state_max, .into = into};
        gd_artifact_answer a;
        GD_TRY(gd_member_fetch(n, &a, in->target, &req, state_max));
        snprintf(ev->segment_state_path, sizeof ev->segment_state_path, "%s", a.path);
        gd_artifact_answer_free(&a);
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
    /* The payload is read where it is kept: the check takes out only the
     * drawn chunk. */
    const gd_member_peer_payload *held = NULL;
    GD_TRY(gd_member_payload_held(n, &held, in->target));
    return gd_member_payload_path(n, ev->payload_path, held);
}

/* The answer to a check of this node's own commitment: its own digest,
 * from the trace of the segment it kept while it trained and the
 * segment's end leaf, both stored with the round (no re-execution). */
static gd_status gd_member_own_answer(gd_member *n, const gd_action *a, const gd_view_check *vc,
                                      uint8_t digest[32]) {
    gd_buf traces = {0}, transcript = {0};
    gd_status s = gd_artifact_get(&n->store, &traces, GD_ARTIFACT_TRACES, n->o.run, a->round,
                                  0, (size_t)GD_MMR_MAX_LEAVES * GD_DILOCO_HASH_LEN);
    if (s == GD_OK)
        s = gd_artifact_get(&n->store, &transcript, GD_ARTIFACT_TRANSCRIPT, n->o.run, a->round,
                            0, (size_t)(GD_MMR_MAX_LEAVES + 2) * GD_WORKER_DESC_BYTES);
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
static gd_status gd_member_answer_for(gd_member *n, const gd_action *a,
                                      const gd_member_answer **out, bool recheck, bool *ready) {
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
        gd_status s = n->chain.iface->query_round(n->chain.ctx, &prev_round, n->o.run,
                                                  a->round - 1);
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
    float *prev_chunk = NULL;
    if (overlapped &&
        gd_values_chunk_range(n->engine.n, n->engine.rc.diloco.chunk_elems, vc->chunk, &lo,
                              &count)) {
        const Gonka__Diloco__V1__Round *pr = prev_round ? prev_round->round : NULL;
        const gd_global_state *g_prev = NULL;
        s = pr && pr->start_state_hash.len == 32
                ? gd_member_global_view(n, &g_prev, a->round - 1, pr->start_state_hash.data)
                : gd_fail(GD_ERR_NOT_FOUND, "round %" PRIu64 " has no start state hash",
                          a->round - 1);
        if (s == GD_OK && (prev_chunk = malloc(count * sizeof(float))) == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory");
        if (s == GD_OK) /* from memory, or G's file checked against its leaf */
            s = gd_global_state_read(g_prev, prev_chunk, NULL, lo, count);
        in.prev_global_chunk = prev_chunk;
    }
    gd_check_evidence ev;
    memset(&ev, 0, sizeof ev);
    gd_check_answer ans;
    memset(&ans, 0, sizeof ans);
    if (s != GD_OK) {
        if (prev_round)
            protobuf_c_message_free_unpacked(&prev_round->base, NULL);
        free(prev_chunk);
        return s;
    }
    s = gd_check_fetch(n, &in, overlapped, &ev);
    const gd_round_windows *w = &n->view.view.round.windows;
    int64_t from = recheck ? w->dispute_start : w->verify_start;
    int64_t end = recheck ? w->dispute_open_start : w->open_start;
    if (s == GD_ERR_NOMEM || s == GD_ERR_IO) {
        /* Local (memory, or this node's own disk: GD_ERR_IO is never a
         * peer's, whose failures are network, timeout, parse or refusal
         * statuses): stop, the check stays due; never the target's fault. */
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
    /* The big buffers serve the next check's fetches; the segment's start
     * is read (a retry fetches it again). */
    if (ev.segment_state_path[0] != '\0')
        (void)unlink(ev.segment_state_path);
    gd_member_recycle(n, &ev.start_chunk);
    gd_member_recycle(n, &ev.post_chunk);
    gd_member_recycle(n, &ev.prev_payload_chunk);
    gd_check_evidence_free(&ev);
    if (prev_round)
        protobuf_c_message_free_unpacked(&prev_round->base, NULL);
    free(prev_chunk);
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

gd_status gd_duty_answer(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    bool recheck = a->kind == GD_ACT_RECHECK || a->kind == GD_ACT_REVEAL_RECHECK;
    bool seal = a->kind == GD_ACT_CHECK || a->kind == GD_ACT_RECHECK;
    const gd_member_answer *x = NULL;
    bool ready = false;
    GD_TRY(gd_member_answer_for(n, a, &x, recheck, &ready));
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
