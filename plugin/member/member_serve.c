/* What a node serves to peers, and when (plugin/member/member.h): the one home of
 * the serving rules, whatever the transport.
 *
 *   payload (whole or a chunk)   once its round's commit window is over: a
 *                                copier sees it only after it could commit;
 *   a peer's payload it holds    the same (a mirror for a member its worker
 *                                refuses: gd_member_payload_mirrored);
 *   transcript and states        once the round's verify randomness is
 *                                fixed (its verify_start block): a worker
 *                                learns which segment is checked only after
 *                                its states are committed, and nobody can
 *                                re-execute ahead of the draw;
 *   G_R chunks                   once round R - 1 is over (DONE or VOID:
 *                                G_R's hash is on chain; after a DONE round
 *                                each member holds G_R from then on,
 *                                gd_member_prepare_global) or R = 0;
 *   checkpoint.safetensors       G of the current round, once it is open.
 * Earlier rounds are served until they are pruned. Nothing is read from
 * outside the store: every path is built from numbers (plugin/member/artifact_store.h). */
#include <inttypes.h>
#include <string.h>

#include "common/clock.h"
#include "common/file.h"
#include "plugin/member/member_internal.h"

#define GD_SERVE_STALE_MS 1000 /* the step's read is older: ask the chain's head */
#define GD_SERVE_HEAD_MS 500   /* a head asked this recently is reused */

/* The chain's head, asked at most every GD_SERVE_HEAD_MS by one server
 * thread at a time (the others take the last answer rather than wait). */
static int64_t gd_member_head(gd_member *n) {
    if (pthread_mutex_trylock(&n->head_mu) != 0)
        return 0;
    int64_t now = gd_clock_ms();
    if (now - n->head_ms >= GD_SERVE_HEAD_MS) {
        int64_t h = 0;
        if (n->chain.iface->head(n->chain.ctx, &h) == GD_OK)
            n->head_height = h;
        n->head_ms = now; /* a chain that does not answer is not asked again at once */
    }
    int64_t h = n->head_height;
    pthread_mutex_unlock(&n->head_mu);
    return h;
}

/* The latest height and round the node has seen, under the lock. A step
 * held by a long duty (a segment's re-execution, training) reads the
 * chain late, exactly when peers ask for what a window opens: then the
 * height is the chain's head, which the server asks itself. The windows
 * stay those of the round the step last read. */
static gd_serve_clock gd_clock(gd_member *n) {
    pthread_mutex_lock(&n->mu);
    gd_serve_clock c = {n->stats.height, n->stats.have_round, n->stats.round,
                        n->stats.round_over, n->stats.windows};
    int64_t read_ok = n->stats.read_ok_ms;
    pthread_mutex_unlock(&n->mu);
    if (n->chain.iface->head != NULL && read_ok > 0 &&
        gd_clock_ms() - read_ok >= GD_SERVE_STALE_MS) {
        int64_t head = gd_member_head(n);
        if (head > c.height)
            c.height = head;
    }
    return c;
}

/* 0 if the artifact of `round` may be served now, else 425. */
static unsigned gd_serve_window(const gd_serve_clock *c, gd_artifact_req_kind kind,
                                uint64_t round) {
    if (kind == GD_REQ_GLOBAL_CHUNK)
        return round == 0 || (c->have_round && (round <= c->round ||
                                                (round == c->round + 1 && c->round_over)))
                   ? 0
                   : 425;
    if (!c->have_round || round > c->round)
        return 425;
    if (round < c->round)
        return 0;
    bool payload = kind == GD_REQ_PAYLOAD || kind == GD_REQ_PAYLOAD_CHUNK ||
                   kind == GD_REQ_PEER_PAYLOAD;
    int64_t from = payload ? c->w.reveal_start - 1 : c->w.verify_start;
    return c->height >= from ? 0 : 425;
}

static gd_status gd_serve_file(gd_member *n, gd_artifact_answer *out, gd_artifact_kind kind,
                               const gd_artifact_req *req, unsigned *http_status) {
    GD_TRY(gd_artifact_path(&n->store, out->path, sizeof out->path, kind, req->run, req->round,
                            req->leaf));
    out->content_type = "application/octet-stream";
    *http_status = 200;
    return GD_OK;
}

static gd_status gd_serve_payload_chunk(gd_member *n, const gd_artifact_req *req,
                                        gd_artifact_answer *out) {
    out->content_type = "application/octet-stream";
    return gd_artifact_payload_chunk(&n->store, req->run, req->round, req->chunk, &out->body,
                                     &out->proof);
}

/* Chunk i of the arrays of a stored state: a worker state's params,
 * exp_avg, exp_avg_sq and residual; or G's params and momentum (with the
 * descriptor first in the proof). Each file is indexed once and the last
 * few are kept (plugin/member/state_index.h), so a peer fetching every chunk costs
 * one pass over the file, not one per chunk. */
static gd_status gd_serve_array_chunk(gd_member *n, const gd_artifact_req *req,
                                      gd_artifact_answer *out) {
    if (!n->engine_open)
        return gd_fail(GD_ERR_NOT_FOUND, "not serving yet");
    bool global = req->kind == GD_REQ_GLOBAL_CHUNK;
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_path(&n->store, path, sizeof path,
                            global ? GD_ARTIFACT_GLOBAL : GD_ARTIFACT_STATE, req->run, req->round,
                            req->leaf));
    out->content_type = "application/octet-stream";
    pthread_mutex_lock(&n->serve_mu);
    gd_status s = gd_state_index_cache_chunk(&n->served, path, global, n->engine.n,
                                             n->engine.rc.diloco.chunk_elems, req->chunk,
                                             &out->body, &out->proof);
    pthread_mutex_unlock(&n->serve_mu);
    return s;
}

gd_status gd_member_serve(gd_member *n, const gd_artifact_req *req, gd_artifact_answer *out,
                        unsigned *http_status) {
    memset(out, 0, sizeof *out);
    *http_status = 404;
    if (req->kind != GD_REQ_STATUS && req->kind != GD_REQ_METRICS && req->run != n->o.run)
        return gd_fail(GD_ERR_NOT_FOUND, "this node serves run %" PRIu64 " only", n->o.run);
    gd_serve_clock c = gd_clock(n);
    if (n->o.withhold != NULL && n->o.withhold(req, &c))
        return gd_fail(GD_ERR_NOT_FOUND, "not served");
    gd_status s;
    switch (req->kind) {
    case GD_REQ_PAYLOAD:
    case GD_REQ_PAYLOAD_CHUNK:
    case GD_REQ_PEER_PAYLOAD:
    case GD_REQ_TRANSCRIPT:
    case GD_REQ_STATE:
    case GD_REQ_STATE_CHUNK:
    case GD_REQ_GLOBAL_CHUNK:
        if ((*http_status = gd_serve_window(&c, req->kind, req->round)) != 0)
            return gd_fail(GD_ERR_NOT_FOUND, "round %" PRIu64 "'s %s is not served yet",
                           req->round, req->kind == GD_REQ_GLOBAL_CHUNK ? "state" : "artifact");
        *http_status = 404;
        break;
    default: break;
    }
    switch (req->kind) {
    case GD_REQ_PAYLOAD: s = gd_serve_file(n, out, GD_ARTIFACT_PAYLOAD, req, http_status); break;
    case GD_REQ_TRANSCRIPT:
        s = gd_serve_file(n, out, GD_ARTIFACT_TRANSCRIPT, req, http_status);
        break;
    case GD_REQ_STATE: s = gd_serve_file(n, out, GD_ARTIFACT_STATE, req, http_status); break;
    case GD_REQ_PAYLOAD_CHUNK: s = gd_serve_payload_chunk(n, req, out); break;
    case GD_REQ_PEER_PAYLOAD: {
        /* Another member's payload this node holds, by its member number. */
        gd_artifact_req at = *req;
        s = gd_member_mirror_slot(n, &at.leaf, req->round, req->leaf)
                ? gd_serve_file(n, out, GD_ARTIFACT_PEER_PAYLOAD, &at, http_status)
                : gd_fail(GD_ERR_NOT_FOUND, "this node holds no payload of member %" PRIu32
                                            " in round %" PRIu64, req->leaf, req->round);
        break;
    }
    case GD_REQ_CHECKPOINT: {
        /* The agreed G the current round started from. */
        gd_artifact_req at = *req;
        at.round = c.round;
        s = c.have_round ? gd_serve_file(n, out, GD_ARTIFACT_CHECKPOINT, &at, http_status)
                         : gd_fail(GD_ERR_NOT_FOUND, "no round has started yet");
        break;
    }
    case GD_REQ_STATE_CHUNK:
    case GD_REQ_GLOBAL_CHUNK: s = gd_serve_array_chunk(n, req, out); break;
    default: s = gd_fail(GD_ERR_NOT_FOUND, "not served here"); break;
    }
    if (s == GD_OK) {
        *http_status = 200;
        out->drip = n->o.drip != NULL && n->o.drip(req, &c);
    } else {
        gd_artifact_answer_free(out);
    }
    return s;
}

void gd_member_count_out(gd_member *n, uint64_t bytes) {
    pthread_mutex_lock(&n->mu);
    n->stats.bytes_out += bytes;
    pthread_mutex_unlock(&n->mu);
}

void gd_member_count_refused(gd_member *n, const char *reason) {
    pthread_mutex_lock(&n->mu);
    n->stats.http_refused[strcmp(reason, "rate") == 0 ? 0 : 1]++;
    pthread_mutex_unlock(&n->mu);
}

gd_status gd_member_serve_local(gd_member *n, const gd_artifact_req *req, gd_artifact_answer *out,
                                size_t max_len) {
    unsigned status = 0;
    GD_TRY(gd_member_serve(n, req, out, &status));
    gd_status s = GD_OK;
    if (out->path[0] != '\0' && req->into != NULL) {
        /* A file to a file, a window at a time, as HTTP would carry it. */
        uint64_t len = 0;
        s = gd_file_copy_prefix(req->into, out->path, req->first_bytes, max_len, &len);
        snprintf(out->path, sizeof out->path, "%s", s == GD_OK ? req->into : "");
        if (s == GD_OK)
            gd_member_count_out(n, len + out->proof.len);
        else
            gd_artifact_answer_free(out);
        return s;
    }
    if (out->path[0] != '\0') {
        s = req->first_bytes > 0 && req->first_bytes <= max_len
                ? gd_file_read_prefix(&out->body, out->path, (size_t)req->first_bytes)
                : gd_file_read(&out->body, out->path, max_len);
        out->path[0] = '\0';
    }
    if (s == GD_OK && out->body.len > max_len)
        s = gd_fail(GD_ERR_LIMIT, "answer over %zu bytes", max_len);
    if (s != GD_OK)
        gd_artifact_answer_free(out);
    else
        gd_member_count_out(n, out->body.len + out->proof.len);
    return s;
}
