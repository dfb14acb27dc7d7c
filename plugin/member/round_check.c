/* A validator's check of one drawn (target, check) from what the target
 * served (plugin/member/round_engine.h): the links of its transcript, the drawn
 * payload chunk against its final state, and the drawn segment
 * re-executed. Everything the target serves is proved against what it
 * committed before it is used; what does not prove is a FAIL. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "plugin/member/round_engine.h"
#include "plugin/member/state_index.h"

/* A worker state chunk as served: params, exp_avg, exp_avg_sq, residual. */
#define GD_CHECK_CHUNK_ARRAYS 4

void gd_check_evidence_free(gd_check_evidence *ev) {
    gd_buf_free(&ev->transcript);
    gd_buf_free(&ev->prev_transcript);
    gd_buf_free(&ev->segment_state);
    gd_buf_free(&ev->start_chunk);
    gd_buf_free(&ev->start_proof);
    gd_buf_free(&ev->post_chunk);
    gd_buf_free(&ev->post_proof);
    gd_buf_free(&ev->prev_payload_chunk);
    gd_buf_free(&ev->prev_payload_proof);
    ev->payload = NULL;
    ev->payload_len = 0;
}

/* One served chunk of a state's arrays, decoded: count values per array,
 * each array's proof still to be checked against the transcript's roots. */
typedef struct gd_served_chunk {
    float *values; /* GD_CHECK_CHUNK_ARRAYS * count */
    gd_mmr_proof proofs[GD_CHECK_CHUNK_ARRAYS];
} gd_served_chunk;

/* Everything one check holds, freed in one place. */
typedef struct gd_check_ctx {
    gd_engine *e;
    const gd_check_input *in;
    const gd_check_evidence *ev;
    gd_check_answer *out;
    uint32_t segments;
    gd_worker_desc *descs;
    gd_mmr mmr;
    gd_worker_desc *prev_descs;
    gd_mmr prev_mmr;
    bool has_prev;
    gd_prev_link prev;          /* the previous round's last leaf, when has_prev */
    gd_served_chunk start_chunk, post_chunk;
    float *start_values;        /* chunk `chunk` of S_r (G's, or overlapped) */
    gd_payload_view payload; /* the target's, read in place */
    gd_mmr payload_mmr;      /* its commitment, to prove the drawn chunk */
    bool have_payload;
    gd_commitment_view cv;
    gd_global_desc g_desc;
    uint8_t g_hash[32];
    gd_leaf_evidence leaf_start, leaf_final, leaf_post;
} gd_check_ctx;

/* Records a FAIL (the first reason wins) and returns false. */
static bool gd_check_fail(gd_check_ctx *x, const char *what, const char *why) {
    if (x->out->verdict != GD_VERDICT_FAIL) {
        x->out->verdict = GD_VERDICT_FAIL;
        snprintf(x->out->why, sizeof x->out->why, "%s: %s", what, why);
    }
    return false;
}

/* A status from parsing what the peer served: a local failure stays an
 * error; anything else is the peer's fault. */
static bool gd_check_peer(gd_check_ctx *x, gd_status s, const char *what, gd_status *local) {
    if (s == GD_OK)
        return true;
    if (s == GD_ERR_NOMEM || s == GD_ERR_IO) {
        *local = s;
        return false;
    }
    return gd_check_fail(x, what, gd_error_detail());
}

static gd_status gd_check_leaf(gd_check_ctx *x, gd_leaf_evidence *out, uint32_t i) {
    out->desc = x->descs[i];
    return gd_mmr_prove(&x->mmr, &out->proof, i);
}

/* The drawn segment's served start must be this run's state file of
 * transcript leaf `leaf` by its descriptor; its arrays are read when the
 * re-execution loads them, and proved there. It is read where it lies: in
 * memory, or in the file it was fetched to (*fd, closed by the caller). */
static bool gd_check_state(gd_check_ctx *x, gd_state_file_view *out, int *fd, uint32_t leaf,
                           gd_status *local) {
    const gd_check_evidence *ev = x->ev;
    char what[48];
    snprintf(what, sizeof what, "state %u", leaf);
    gd_status s;
    if (ev->segment_state_path[0] != '\0') {
        struct stat st;
        *fd = open(ev->segment_state_path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0 || fstat(*fd, &st) != 0) {
            *local = gd_fail(GD_ERR_IO, "cannot open %s: %s", ev->segment_state_path,
                             strerror(errno));
            return false;
        }
        s = gd_state_file_view_open_file(out, *fd, (uint64_t)st.st_size, &x->e->tag, x->e->n);
    } else {
        s = gd_state_file_view_open(out, ev->segment_state.data, ev->segment_state.len,
                                    &x->e->tag, x->e->n);
    }
    if (!gd_check_peer(x, s, what, local))
        return false;
    uint8_t got[32], want[32];
    gd_worker_desc_hash(&out->desc, got);
    gd_worker_desc_hash(&x->descs[leaf], want);
    if (memcmp(got, want, 32) != 0)
        return gd_check_fail(x, what, "not the transcript's leaf");
    return true;
}

static bool gd_check_transcripts(gd_check_ctx *x, gd_prev_link *prev, bool *has_prev,
                                 gd_status *local) {
    const Gonka__Diloco__V1__Commitment *cm = x->in->commitment;
    x->descs = calloc(gd_transcript_leaves(x->segments), sizeof *x->descs);
    if (x->descs == NULL) {
        *local = gd_fail(GD_ERR_NOMEM, "out of memory");
        return false;
    }
    gd_status s = gd_engine_transcript_parse(x->ev->transcript.data, x->ev->transcript.len,
                                             x->segments, cm->transcript_root.data, x->descs,
                                             &x->mmr);
    if (!gd_check_peer(x, s, "transcript", local))
        return false;
    *has_prev = x->in->prev != NULL;
    if (!*has_prev)
        return true;
    const Gonka__Diloco__V1__Commitment *pc = x->in->prev;
    x->prev_descs = calloc(gd_transcript_leaves(pc->segment_count), sizeof *x->prev_descs);
    if (x->prev_descs == NULL) {
        *local = gd_fail(GD_ERR_NOMEM, "out of memory");
        return false;
    }
    s = gd_engine_transcript_parse(x->ev->prev_transcript.data, x->ev->prev_transcript.len,
                                   pc->segment_count, pc->transcript_root.data, x->prev_descs,
                                   &x->prev_mmr);
    if (!gd_check_peer(x, s, "previous round's transcript", local))
        return false;
    *prev = (gd_prev_link){.round = pc->round, .transcript_root = pc->transcript_root.data,
                           .segments = pc->segment_count};
    prev->post.desc = x->prev_descs[pc->segment_count + 1];
    *local = gd_mmr_prove(&x->prev_mmr, &prev->post.proof, pc->segment_count + 1);
    return *local == GD_OK;
}

static bool gd_check_links(gd_check_ctx *x, const gd_global_state *g, gd_status *local) {
    if (!gd_check_transcripts(x, &x->prev, &x->has_prev, local))
        return false;
    gd_engine *e = x->e;
    gd_pool *pool = gd_trainer_pool(e->trainer);
    if ((*local = gd_global_state_describe(pool, &x->g_desc, gd_trainer_layout(e->trainer)->digest,
                                           e->rc.diloco.chunk_elems, g)) != GD_OK ||
        (*local = gd_check_leaf(x, &x->leaf_start, 0)) != GD_OK ||
        (*local = gd_check_leaf(x, &x->leaf_final, x->segments)) != GD_OK ||
        (*local = gd_check_leaf(x, &x->leaf_post, x->segments + 1)) != GD_OK)
        return false;
    gd_global_desc_hash(&x->g_desc, x->g_hash);
    const Gonka__Diloco__V1__Commitment *cm = x->in->commitment;
    x->cv = (gd_commitment_view){.round = x->in->round, .address = x->in->target,
                                 .rank = x->in->rank, .segments = x->segments,
                                 .transcript_root = cm->transcript_root.data,
                                 .payload_root = cm->payload_root.data,
                                 .payload_leaves = cm->payload_leaves,
                                 .start_state_hash = x->g_hash};
    gd_check_result res;
    *local = gd_diloco_check_links(pool, &e->rc.diloco, gd_trainer_layout(e->trainer)->digest,
                                   e->n, &x->cv, &x->g_desc, x->has_prev ? &x->prev : NULL,
                                   e->zero_root, &x->leaf_start, &x->leaf_final, &x->leaf_post,
                                   &res);
    if (*local != GD_OK)
        return false;
    return res.pass ? true : gd_check_fail(x, "links", res.why);
}

/* A served chunk of state `leaf` must be count values of each array and
 * one well-formed proof per array, nothing more; whether the proofs hold
 * is the payload chunk check's (gd_diloco_check_payload_chunk). */
static bool gd_check_served_chunk(gd_check_ctx *x, gd_served_chunk *out, const gd_buf *body,
                                  const gd_buf *proof, uint32_t leaf, size_t count,
                                  gd_status *local) {
    char what[48];
    snprintf(what, sizeof what, "chunk %u of state %u", x->in->chunk, leaf);
    if (body->len != GD_CHECK_CHUNK_ARRAYS * 4 * count)
        return gd_check_fail(x, what, "not four arrays of the chunk's values");
    const uint8_t *p = proof->data;
    size_t left = proof->len;
    for (int i = 0; i < GD_CHECK_CHUNK_ARRAYS; i++)
        if (!gd_check_peer(x, gd_state_chunk_proof_next(&out->proofs[i], &p, &left), what, local))
            return false;
    if (left != 0)
        return gd_check_fail(x, what, "bytes after its proofs");
    out->values = malloc(body->len);
    if (out->values == NULL) {
        *local = gd_fail(GD_ERR_NOMEM, "out of memory");
        return false;
    }
    gd_get_floats(out->values, body->data, GD_CHECK_CHUNK_ARRAYS * count);
    return true;
}

/* With overlap, S_r's chunk is not G_r's: it is G_{r-1}'s (the caller's,
 * proved against the chain) minus the target's decoded chunk of its round
 * r - 1 payload (served, proved against that commitment), and leaf 0's
 * parameter chunk must be exactly that (the links left it to this check).
 * out receives the chunk of S_r. */
static bool gd_check_overlapped_start(gd_check_ctx *x, float *out, gd_status *local) {
    gd_engine *e = x->e;
    const Gonka__Diloco__V1__Commitment *pc = x->in->prev;
    uint32_t chunk = x->in->chunk;
    if (x->in->prev_global_chunk == NULL) {
        *local = gd_fail(GD_ERR_INVALID, "an overlapped check needs G_%llu's chunk %u",
                         (unsigned long long)(x->in->round - 1), chunk);
        return false;
    }
    gd_mmr_proof proof;
    if (!gd_check_peer(x,
                       gd_mmr_proof_decode(&proof, x->ev->prev_payload_proof.data,
                                           x->ev->prev_payload_proof.len),
                       "previous payload chunk", local))
        return false;
    bool ok = false;
    *local = gd_diloco_overlap_start(&e->rc.diloco, out, e->n, chunk, x->in->prev_global_chunk,
                                     pc->payload_root.data, pc->payload_leaves,
                                     x->ev->prev_payload_chunk.data, x->ev->prev_payload_chunk.len,
                                     &proof, &ok);
    if (*local != GD_OK)
        return false;
    if (!ok)
        return gd_check_fail(x, "previous payload chunk",
                             "not the chunk committed in the round before, or not decodable");
    gd_check_result res;
    *local = gd_diloco_check_start_chunk(e->n, &x->cv, &x->leaf_start, chunk,
                                         x->start_chunk.values, &x->start_chunk.proofs[0], out,
                                         &res);
    if (*local != GD_OK)
        return false;
    return res.pass ? true : gd_check_fail(x, "start chunk", res.why);
}

static bool gd_check_chunk(gd_check_ctx *x, const gd_global_state *g, gd_status *local) {
    gd_engine *e = x->e;
    const gd_diloco_config *c = &e->rc.diloco;
    const Gonka__Diloco__V1__Commitment *cm = x->in->commitment;
    uint32_t chunk = x->in->chunk;
    size_t lo = 0, count = 0;
    if (!gd_values_chunk_range(e->n, c->chunk_elems, chunk, &lo, &count))
        return gd_check_fail(x, "payload chunk", "the drawn chunk is out of range");
    if (!gd_check_served_chunk(x, &x->start_chunk, &x->ev->start_chunk, &x->ev->start_proof, 0,
                               count, local) ||
        !gd_check_served_chunk(x, &x->post_chunk, &x->ev->post_chunk, &x->ev->post_proof,
                               x->segments + 1, count, local))
        return false;
    /* Read in place: only the drawn chunk's bytes are taken out of it, and
     * every chunk is decoded in the pass that proves it (a payload that is
     * the committed one yet does not decode is the worker's fault). */
    gd_status s;
    gd_payload_decoded decoded;
    if (x->ev->payload != NULL || x->ev->payload_path[0] == '\0') {
        s = gd_engine_payload_view_proved(e, &x->payload, &x->payload_mmr, &decoded,
                                          x->in->round,
                                          x->in->target, x->ev->payload, x->ev->payload_len,
                                          cm->payload_root.data, cm->payload_leaves);
    } else {
        /* A held file was checked against the commitment when it was kept:
         * failing now is this node's disk, never the target's. */
        s = gd_engine_payload_view_path_proved(e, &x->payload, &x->payload_mmr, &decoded,
                                               x->in->round, x->in->target, x->ev->payload_path,
                                               cm->payload_root.data, cm->payload_leaves);
        if (s != GD_OK && s != GD_ERR_NOMEM)
            s = gd_fail_context(GD_ERR_IO, "the payload kept in %s", x->ev->payload_path);
    }
    if (!gd_check_peer(x, s, "payload", local))
        return false;
    x->have_payload = true;
    if (decoded.malformed) {
        char why[sizeof decoded.why + 48];
        snprintf(why, sizeof why, "chunk %u does not decode: %s", (unsigned)decoded.bad_chunk,
                 decoded.why);
        return gd_check_fail(x, "payload", why);
    }
    if (chunk >= x->payload.header.chunk_count)
        return gd_check_fail(x, "payload chunk", "the drawn chunk is out of range");
    x->start_values = malloc(count * sizeof(float));
    if (x->start_values == NULL) {
        *local = gd_fail(GD_ERR_NOMEM, "out of memory");
        return false;
    }
    if (gd_diloco_start_by_chunk(c, &x->cv, x->has_prev ? &x->prev : NULL)) {
        if (!gd_check_overlapped_start(x, x->start_values, local))
            return false;
    } else if ((*local = gd_global_state_read(g, x->start_values, NULL, lo, count)) != GD_OK) {
        return false; /* G's chunk from memory, or its file checked against its leaf */
    }
    const float *start_values = x->start_values;
    /* θ_H's values and the residual it was trained with are proved against
     * leaf S's roots: the post-encoding leaf keeps θ_H, and the residual
     * is unchanged from leaf 0 to leaf S. The new residual is leaf S + 1's. */
    const size_t residual = 3 * count;
    gd_chunk_evidence ev = {.chunk = chunk,
                            .params = x->post_chunk.values,
                            .params_proof = x->post_chunk.proofs[0],
                            .residual_in = x->start_chunk.values + residual,
                            .residual_in_proof = x->start_chunk.proofs[3],
                            .residual_out = x->post_chunk.values + residual,
                            .residual_out_proof = x->post_chunk.proofs[3],
                            .payload = NULL, .payload_len = 0};
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    s = gd_payload_view_raw(&x->payload, chunk, &raw, &raw_len);
    if (!gd_check_peer(x, s, "payload chunk", local))
        return false;
    ev.payload = raw;
    ev.payload_len = raw_len;
    if ((*local = gd_mmr_prove(&x->payload_mmr, &ev.payload_proof, chunk + 1)) != GD_OK)
        return false;
    gd_check_result res;
    *local = gd_diloco_check_payload_chunk(c, e->n, &x->cv, &x->leaf_final, &x->leaf_post, &ev,
                                           start_values, &res);
    if (*local != GD_OK)
        return false;
    return res.pass ? true : gd_check_fail(x, "payload chunk", res.why);
}

/* Re-executes the drawn segment from its served start. */
static bool gd_check_replay(gd_check_ctx *x, const gd_state_file_view *start, gd_status *local) {
    gd_engine *e = x->e;
    uint32_t seg = x->in->segment;
    gd_leaf_evidence a, b;
    if ((*local = gd_check_leaf(x, &a, seg)) != GD_OK ||
        (*local = gd_check_leaf(x, &b, seg + 1)) != GD_OK)
        return false;
    uint8_t end_leaf[32];
    gd_worker_desc_hash(&x->descs[seg + 1], end_leaf);
    gd_segment_claim claim = {.cv = &x->cv, .segment = seg,
                              .first_step = x->leaf_start.desc.step,
                              .residual_root = x->leaf_start.desc.residual_root,
                              .start = gd_state_file_view_source(start),
                              .start_proof = &a.proof, .end_leaf = end_leaf,
                              .end_proof = &b.proof};
    gd_check_result res;
    *local = gd_diloco_verify_segment(e->trainer, &e->rc.diloco, e->data, &claim, &res);
    if (*local != GD_OK)
        return false;
    gd_diloco_verdict_digest(x->out->digest, e->rc.diloco.run, x->in->round, x->in->target, seg,
                             res.trace, res.end_state);
    return res.pass ? true : gd_check_fail(x, "segment", res.why);
}

static bool gd_check_segment(gd_check_ctx *x, gd_status *local) {
    uint32_t seg = x->in->segment;
    if (seg >= x->segments)
        return gd_check_fail(x, "segment", "the drawn segment is out of range");
    gd_state_file_view start;
    int fd = -1;
    bool pass = gd_check_state(x, &start, &fd, seg, local) && gd_check_replay(x, &start, local);
    if (fd >= 0)
        close(fd);
    return pass;
}

gd_status gd_engine_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                          const gd_global_state *g, gd_check_answer *out) {
    memset(out, 0, sizeof *out);
    out->verdict = GD_VERDICT_PASS;
    if (g->n != e->n)
        return gd_fail(GD_ERR_INVALID, "G has %zu values, the model %zu", g->n, e->n);
    gd_check_ctx x = {.e = e, .in = in, .ev = ev, .out = out,
                      .segments = in->commitment->segment_count};
    gd_mmr_init(&x.mmr);
    gd_mmr_init(&x.prev_mmr);
    gd_status local = GD_OK;
    if (x.segments == 0 || x.segments > GD_MMR_MAX_LEAVES / 2)
        gd_check_fail(&x, "commitment", "segment count out of range");
    else if (gd_check_links(&x, g, &local) && gd_check_chunk(&x, g, &local))
        (void)gd_check_segment(&x, &local);
    free(x.descs);
    free(x.prev_descs);
    gd_mmr_free(&x.mmr);
    gd_mmr_free(&x.prev_mmr);
    free(x.start_chunk.values);
    free(x.post_chunk.values);
    free(x.start_values);
    if (x.have_payload) {
        gd_payload_view_close(&x.payload);
        gd_mmr_free(&x.payload_mmr);
    }
    return local;
}
