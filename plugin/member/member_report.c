/* The report of a peer's payload (plugin/member/member_internal.h): its
 * availability, proved by chunks drawn from it, with a sample of its states
 * fetched as a validator fetches them. */
#include <inttypes.h>

#include "common/log.h"
#include "plugin/member/avail_proof.h"
#include "plugin/member/member_internal.h"

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

gd_status gd_duty_report(gd_member *n, const gd_action *a, gd_any *msg, bool *sent) {
    GD_TRY(gd_member_engine(n));
    const gd_member_peer_payload *held = NULL;
    gd_status s = gd_member_payload_held(n, &held, a->target);
    if (s == GD_ERR_PENDING)
        return GD_OK; /* still coming: a later step reports it */
    if (s != GD_OK) {
        gd_member_error(n, "height %" PRId64 ": report on %s: %s", n->view.view.height, a->target,
                      gd_error_detail());
        return s == GD_ERR_NOMEM ? s : GD_OK;
    }
    if (held->malformed) /* committed, but no one could aggregate it */
        return GD_OK;
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
    /* The payload kept this round, read in place from its file. */
    gd_payload_view p;
    gd_mmr mmr;
    char path[GD_ARTIFACT_PATH_MAX];
    s = gd_member_payload_path(n, path, held);
    if (s == GD_OK)
        s = gd_payload_view_open_path(&p, path);
    if (s == GD_OK && (s = gd_payload_view_mmr(&p, &mmr, gd_trainer_pool(n->engine.trainer))) != GD_OK)
        gd_payload_view_close(&p);
    if (s == GD_OK && mmr.n_leaves != c->payload_leaves) {
        s = gd_fail(GD_ERR_INVALID, "the payload of %s kept this round has %u leaves, not %u",
                    a->target, (unsigned)mmr.n_leaves, (unsigned)c->payload_leaves);
        gd_mmr_free(&mmr);
        gd_payload_view_close(&p);
    }
    if (s != GD_OK) {
        gd_avail_state_free(&st);
        return s;
    }
    gd_diloco_chunk_proof chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
    gd_buf wire[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
    uint32_t count = 0;
    s = gd_avail_prove(&p, &mmr, r->verify_randomness.data, a->target, n->address,
                       n->ans.run->run->spec->avail_chunks, chunks, wire, &count);
    if (s == GD_OK)
        s = gd_diloco_msg_report_availability(msg, n->address, n->o.run, a->round, a->target,
                                              chunks, count, sampled ? &st.proof : NULL);
    for (size_t i = 0; i < GD_DILOCO_AVAIL_CHUNKS_MAX; i++)
        gd_buf_free(&wire[i]);
    gd_mmr_free(&mmr);
    gd_payload_view_close(&p);
    gd_avail_state_free(&st);
    *sent = s == GD_OK;
    return s;
}
