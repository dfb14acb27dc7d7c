/* What a node serves to peers, and when (plugin/member.h): the one home of
 * the serving rules, whatever the transport.
 *
 *   payload (whole or a chunk)   once its round's commit window is over: a
 *                                copier sees it only after it could commit;
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
 * outside the store: every path is built from numbers (plugin/artifact_store.h). */
#include <inttypes.h>
#include <string.h>

#include "common/file.h"
#include "plugin/member_internal.h"

/* The latest height and round the node has seen, under the lock. */
typedef struct gd_serve_clock {
    int64_t height;
    bool have_round;
    uint64_t round;
    bool round_over;
    gd_round_windows w;
} gd_serve_clock;

static gd_serve_clock gd_clock(gd_member *n) {
    pthread_mutex_lock(&n->mu);
    gd_serve_clock c = {n->stats.height, n->stats.have_round, n->stats.round,
                        n->stats.round_over, n->stats.windows};
    pthread_mutex_unlock(&n->mu);
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
    int64_t from = kind == GD_REQ_PAYLOAD || kind == GD_REQ_PAYLOAD_CHUNK ? c->w.reveal_start - 1
                                                                          : c->w.verify_start;
    return c->height >= from ? 0 : 425;
}

static gd_status gd_serve_file(gd_member *n, gd_artifact_kind kind, const gd_artifact_req *req,
                               gd_artifact_answer *out, unsigned *http_status) {
    GD_TRY(gd_artifact_path(&n->store, kind, req->run, req->round, req->leaf, out->path,
                            sizeof out->path));
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

static gd_status gd_append_proof(gd_buf *out, const gd_mmr_proof *p) {
    gd_buf w = {0};
    GD_TRY(gd_mmr_proof_encode(p, &w));
    uint8_t len[4];
    gd_put_le32(len, (uint32_t)w.len);
    gd_status s = gd_buf_append(out, len, 4);
    if (s == GD_OK)
        s = gd_buf_append(out, w.data, w.len);
    gd_buf_free(&w);
    return s;
}

static gd_status gd_float_bytes(gd_buf *out, const float *v, size_t count) {
    GD_TRY(gd_buf_reserve(out, 4 * count));
    for (size_t i = 0; i < count; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        gd_put_le32(out->data + out->len + 4 * i, u);
    }
    out->len += 4 * count;
    return GD_OK;
}

/* Chunk i of the arrays of a stored state: a worker state's params,
 * exp_avg, exp_avg_sq and residual; or G's params and momentum (with the
 * descriptor first in the proof). */
static gd_status gd_serve_array_chunk(gd_member *n, const gd_artifact_req *req,
                                      gd_artifact_answer *out) {
    if (!n->engine_open)
        return gd_fail(GD_ERR_NOT_FOUND, "not serving yet");
    gd_engine *e = &n->engine;
    bool global = req->kind == GD_REQ_GLOBAL_CHUNK;
    size_t lo = 0, count = 0;
    uint32_t ce = e->rc.diloco.chunk_elems;
    if (!gd_values_chunk_range(e->n, ce, req->chunk, &lo, &count))
        return gd_fail(GD_ERR_NOT_FOUND, "no chunk %u", req->chunk);
    gd_buf b = {0};
    size_t max = global ? GD_GLOBAL_DESC_BYTES + 8 * e->n : 312 + 16 * e->n;
    GD_TRY(gd_artifact_get(&n->store, global ? GD_ARTIFACT_GLOBAL : GD_ARTIFACT_STATE, req->run,
                           req->round, req->leaf, max, &b));
    gd_pool *pool = NULL; /* the engine's pool belongs to the step's thread */
    gd_status s = GD_OK;
    out->content_type = "application/octet-stream";
    if (global) {
        gd_global_state g;
        memset(&g, 0, sizeof g);
        gd_global_desc d;
        s = b.len == max ? gd_global_state_init(&g, e->n)
                         : gd_fail(GD_ERR_IO, "the stored G is malformed");
        if (s == GD_OK)
            s = gd_global_desc_decode(&d, b.data, GD_GLOBAL_DESC_BYTES);
        if (s == GD_OK) {
            for (size_t i = 0; i < e->n; i++) {
                uint32_t p = gd_get_le32(b.data + GD_GLOBAL_DESC_BYTES + 4 * i);
                uint32_t m = gd_get_le32(b.data + GD_GLOBAL_DESC_BYTES + 4 * (e->n + i));
                memcpy(&g.params[i], &p, 4);
                memcpy(&g.momentum[i], &m, 4);
            }
            s = gd_buf_append(&out->proof, b.data, GD_GLOBAL_DESC_BYTES);
        }
        gd_mmr_proof pp, mp;
        if (s == GD_OK)
            s = gd_values_prove(pool, g.params, e->n, ce, req->chunk, &pp);
        if (s == GD_OK)
            s = gd_values_prove(pool, g.momentum, e->n, ce, req->chunk, &mp);
        if (s == GD_OK)
            s = gd_append_proof(&out->proof, &pp);
        if (s == GD_OK)
            s = gd_append_proof(&out->proof, &mp);
        if (s == GD_OK)
            s = gd_float_bytes(&out->body, g.params + lo, count);
        if (s == GD_OK)
            s = gd_float_bytes(&out->body, g.momentum + lo, count);
        if (g.params)
            gd_global_state_free(&g);
    } else {
        gd_worker_state w;
        gd_worker_desc d;
        memset(&w, 0, sizeof w);
        s = gd_worker_state_parse(pool, &w, &d, b.data, b.len, &e->tag, e->n);
        const float *arrays[4] = {w.params, w.exp_avg, w.exp_avg_sq, w.residual};
        for (int k = 0; s == GD_OK && k < 4; k++) {
            gd_mmr_proof p;
            s = gd_values_prove(pool, arrays[k], e->n, ce, req->chunk, &p);
            if (s == GD_OK)
                s = gd_append_proof(&out->proof, &p);
            if (s == GD_OK)
                s = gd_float_bytes(&out->body, arrays[k] + lo, count);
        }
        gd_worker_state_free(&w);
    }
    gd_buf_free(&b);
    return s;
}

gd_status gd_member_serve(gd_member *n, const gd_artifact_req *req, gd_artifact_answer *out,
                        unsigned *http_status) {
    memset(out, 0, sizeof *out);
    *http_status = 404;
    if (req->kind != GD_REQ_STATUS && req->kind != GD_REQ_METRICS && req->run != n->o.run)
        return gd_fail(GD_ERR_NOT_FOUND, "this node serves run %" PRIu64 " only", n->o.run);
    if (n->o.withhold != NULL && n->o.withhold(req))
        return gd_fail(GD_ERR_NOT_FOUND, "not served");
    gd_serve_clock c = gd_clock(n);
    gd_status s;
    switch (req->kind) {
    case GD_REQ_PAYLOAD:
    case GD_REQ_PAYLOAD_CHUNK:
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
    case GD_REQ_PAYLOAD: s = gd_serve_file(n, GD_ARTIFACT_PAYLOAD, req, out, http_status); break;
    case GD_REQ_TRANSCRIPT:
        s = gd_serve_file(n, GD_ARTIFACT_TRANSCRIPT, req, out, http_status);
        break;
    case GD_REQ_STATE: s = gd_serve_file(n, GD_ARTIFACT_STATE, req, out, http_status); break;
    case GD_REQ_PAYLOAD_CHUNK: s = gd_serve_payload_chunk(n, req, out); break;
    case GD_REQ_CHECKPOINT: {
        /* The agreed G the current round started from. */
        gd_artifact_req at = *req;
        at.round = c.round;
        s = c.have_round ? gd_serve_file(n, GD_ARTIFACT_CHECKPOINT, &at, out, http_status)
                         : gd_fail(GD_ERR_NOT_FOUND, "no round has started yet");
        break;
    }
    case GD_REQ_STATE_CHUNK:
    case GD_REQ_GLOBAL_CHUNK: s = gd_serve_array_chunk(n, req, out); break;
    default: s = gd_fail(GD_ERR_NOT_FOUND, "not served here"); break;
    }
    if (s == GD_OK)
        *http_status = 200;
    else
        gd_artifact_answer_free(out);
    return s;
}

void gd_member_count_out(gd_member *n, uint64_t bytes) {
    pthread_mutex_lock(&n->mu);
    n->stats.bytes_out += bytes;
    pthread_mutex_unlock(&n->mu);
}

gd_status gd_member_serve_local(gd_member *n, const gd_artifact_req *req, size_t max_len,
                                gd_artifact_answer *out) {
    unsigned status = 0;
    GD_TRY(gd_member_serve(n, req, out, &status));
    gd_status s = GD_OK;
    if (out->path[0] != '\0') {
        s = gd_file_read(out->path, max_len, &out->body);
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
