/* The verifier's checks of one commitment (see verify.h). Why it is built
 * this way:
 * - Every rule compares something the worker served with something the
 *   verifier holds from the chain or derives itself; no field of a served
 *   state is trusted for what the chain fixes (rank, address, round, the
 *   run's spec): it is compared, and re-execution uses the chain's value.
 * - Sizes from outside are compared with the model's before anything is
 *   copied or hashed.
 * - A failed rule is a verdict (pass = false, why), not an error: errors are
 *   kept for local failures, so a validator never turns a peer's lie into
 *   a crash or a skipped check. */
#include "trainer/verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "proofs/diloco_rules.h"
#include "trainer/codec.h"
#include "trainer/diloco_impl.h"

/* Records the first failed rule; always returns false. */
static bool gd_refuse(gd_check_result *res, const char *fmt, ...) GD_PRINTF(2, 3);
static bool gd_refuse(gd_check_result *res, const char *fmt, ...) {
    if (res->pass || res->why[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->why, sizeof res->why, fmt, ap);
        va_end(ap);
    }
    res->pass = false;
    return false;
}

static void gd_result_begin(gd_check_result *res) {
    memset(res, 0, sizeof *res);
    res->pass = true;
}

bool gd_diloco_leaf_proven(const uint8_t root[GD_MMR_HASH_LEN], uint32_t segments,
                           uint32_t index, const gd_leaf_evidence *ev) {
    if (segments == 0 || segments > GD_MMR_MAX_LEAVES - 2 || ev->proof.leaf_index != index ||
        ev->proof.leaf_count != gd_transcript_leaves(segments))
        return false;
    uint8_t hash[GD_MMR_HASH_LEN], leaf[GD_MMR_HASH_LEN];
    gd_worker_desc_hash(&ev->desc, hash);
    gd_mmr_hash_leaf(leaf, index, hash, sizeof hash);
    return gd_mmr_verify(root, &ev->proof, leaf);
}

/* --- links --------------------------------------------------------------------------- */

/* What every leaf of the commitment must name. */
static bool gd_leaf_names(const gd_worker_desc *d, const gd_state_tag *tag, size_t n,
                          const gd_commitment_view *cv, uint64_t round, const char *which,
                          gd_check_result *res) {
    if (d->tag.run != tag->run || memcmp(d->tag.spec_digest, tag->spec_digest, 32) != 0)
        return gd_refuse(res, "%s names another run or run spec", which);
    if (memcmp(d->tag.layout_digest, tag->layout_digest, 32) != 0 || d->n != n)
        return gd_refuse(res, "%s has another model layout or size (%llu values, want %zu)",
                         which, (unsigned long long)d->n, n);
    if (d->tag.chunk_elems != tag->chunk_elems)
        return gd_refuse(res, "%s is hashed in chunks of %u values, not the run's %u", which,
                         d->tag.chunk_elems, tag->chunk_elems);
    if (d->round != round)
        return gd_refuse(res, "%s is of round %llu, not %llu", which,
                         (unsigned long long)d->round, (unsigned long long)round);
    if (strcmp(d->address, cv->address) != 0)
        return gd_refuse(res, "%s names worker '%s', not '%s'", which, d->address, cv->address);
    if (d->rank != cv->rank)
        return gd_refuse(res, "%s trains on data rank %u; the chain assigned rank %u", which,
                         d->rank, cv->rank);
    return true;
}

static bool gd_same_root(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 32) == 0; }

bool gd_diloco_start_by_chunk(const gd_diloco_config *c, const gd_commitment_view *cv,
                              const gd_prev_link *prev) {
    return c->overlap && prev != NULL && !prev->initial && cv->round > 0 &&
           prev->round == cv->round - 1;
}

/* Leaf 0's optimizer state against the previous round's last leaf, or the
 * run's initial optimizer state (zeros at step 0). */
static gd_status gd_check_prev(gd_pool *pool, const gd_state_tag *tag, size_t n,
                               const gd_commitment_view *cv, const gd_prev_link *prev,
                               const uint8_t *zero_root, const gd_worker_desc *start,
                               gd_check_result *res) {
    if (prev == NULL) {
        uint8_t zero[GD_MMR_HASH_LEN];
        if (zero_root != NULL)
            memcpy(zero, zero_root, sizeof zero);
        else
            GD_TRY(gd_zero_values_root(pool, n, tag->chunk_elems, zero));
        if (start->step != 0)
            gd_refuse(res, "a worker's first round starts at step 0, not %llu",
                      (unsigned long long)start->step);
        else if (!gd_same_root(start->exp_avg_root, zero) ||
                 !gd_same_root(start->exp_avg_sq_root, zero) ||
                 !gd_same_root(start->residual_root, zero))
            gd_refuse(res, "a worker's first round starts with zero moments and residual");
        return GD_OK;
    }
    if (prev->initial) {
        const gd_worker_desc *p = &prev->post.desc;
        if (start->step != p->step || !gd_same_root(start->exp_avg_root, p->exp_avg_root) ||
            !gd_same_root(start->exp_avg_sq_root, p->exp_avg_sq_root) ||
            !gd_same_root(start->residual_root, p->residual_root))
            gd_refuse(res, "a worker's first round starts from the run's initial optimizer "
                           "state");
        return GD_OK;
    }
    if (prev->round >= cv->round)
        gd_refuse(res, "the previous commitment is of round %llu, not before %llu",
                  (unsigned long long)prev->round, (unsigned long long)cv->round);
    else if (!gd_diloco_leaf_proven(prev->transcript_root, prev->segments, prev->segments + 1,
                                    &prev->post))
        gd_refuse(res, "the previous round's last leaf is not proved by its transcript");
    else if (prev->post.desc.stage != GD_STAGE_ENCODED)
        gd_refuse(res, "the previous round's last leaf is not a post-encode state");
    else if (gd_leaf_names(&prev->post.desc, tag, n, cv, prev->round, "the previous last leaf",
                           res)) {
        const gd_worker_desc *p = &prev->post.desc;
        if (start->step != p->step)
            gd_refuse(res, "leaf 0 is at step %llu; the previous round ended at %llu",
                      (unsigned long long)start->step, (unsigned long long)p->step);
        else if (!gd_same_root(start->exp_avg_root, p->exp_avg_root) ||
                 !gd_same_root(start->exp_avg_sq_root, p->exp_avg_sq_root))
            gd_refuse(res, "leaf 0's AdamW moments are not those the previous round ended with");
        else if (!gd_same_root(start->residual_root, p->residual_root))
            gd_refuse(res, "leaf 0's error-feedback residual is not the one the previous "
                           "round's encoding left");
    }
    return GD_OK;
}

gd_status gd_diloco_check_links(gd_pool *pool, const gd_diloco_config *c,
                                const uint8_t layout_digest[32], size_t n,
                                const gd_commitment_view *cv, const gd_global_desc *g_start,
                                const gd_prev_link *prev, const uint8_t *zero_root,
                                const gd_leaf_evidence *start, const gd_leaf_evidence *final,
                                const gd_leaf_evidence *post, gd_check_result *res) {
    gd_result_begin(res);
    gd_state_tag tag = {.run = c->run, .chunk_elems = c->chunk_elems};
    memcpy(tag.spec_digest, c->spec_digest, 32);
    memcpy(tag.layout_digest, layout_digest, 32);
    uint32_t S = cv->segments;
    const gd_worker_desc *d0 = &start->desc, *dS = &final->desc, *dp = &post->desc;
    uint8_t g_hash[GD_MMR_HASH_LEN];
    gd_global_desc_hash(g_start, g_hash);
    if (S == 0)
        gd_refuse(res, "a commitment of no segments");
    else if (!gd_diloco_leaf_proven(cv->transcript_root, S, 0, start))
        gd_refuse(res, "leaf 0 is not proved by the committed transcript");
    else if (!gd_diloco_leaf_proven(cv->transcript_root, S, S, final))
        gd_refuse(res, "leaf %u (the trained state) is not proved by the committed transcript",
                  S);
    else if (!gd_diloco_leaf_proven(cv->transcript_root, S, S + 1, post))
        gd_refuse(res, "leaf %u (the encoded state) is not proved by the committed transcript",
                  S + 1);
    else if (!gd_same_root(g_hash, cv->start_state_hash))
        gd_refuse(res, "the global state given is not the round's start state");
    else if (g_start->n != n || g_start->chunk_elems != c->chunk_elems ||
             !gd_same_root(g_start->layout_digest, layout_digest))
        gd_refuse(res, "the round's start state has another layout, size or chunking");
    else if (gd_leaf_names(d0, &tag, n, cv, cv->round, "leaf 0", res) &&
             gd_leaf_names(dS, &tag, n, cv, cv->round, "the trained leaf", res) &&
             gd_leaf_names(dp, &tag, n, cv, cv->round, "the encoded leaf", res)) {
        if (d0->stage != GD_STAGE_TRAIN || dS->stage != GD_STAGE_TRAIN ||
            dp->stage != GD_STAGE_ENCODED)
            gd_refuse(res, "the transcript's leaves are not training, training, encoded");
        else if (!gd_diloco_start_by_chunk(c, cv, prev) &&
                 !gd_same_root(d0->params_root, g_start->params_root))
            gd_refuse(res, "leaf 0's parameters are not the round's start state: the round "
                           "was not trained from G_%llu",
                      (unsigned long long)cv->round);
        else if (dS->step < d0->step || dS->step - d0->step != (uint64_t)S * c->segment_steps)
            gd_refuse(res, "the trained leaf is %llu steps after leaf 0, not %u x %u",
                      (unsigned long long)(dS->step - d0->step), S, c->segment_steps);
        else if (!gd_same_root(dS->residual_root, d0->residual_root))
            gd_refuse(res, "the residual changed during training");
        else if (dp->step != dS->step || !gd_same_root(dp->params_root, dS->params_root) ||
                 !gd_same_root(dp->exp_avg_root, dS->exp_avg_root) ||
                 !gd_same_root(dp->exp_avg_sq_root, dS->exp_avg_sq_root))
            gd_refuse(res, "the encoded leaf changes more than the residual");
        else
            GD_TRY(gd_check_prev(pool, &tag, n, cv, prev, zero_root, d0, res));
    }
    return GD_OK;
}

/* --- chunks ------------------------------------------------------------------------------ */

static bool gd_payload_chunk_proven(const uint8_t root[32], uint32_t leaves, uint32_t chunk,
                                    const uint8_t *bytes, size_t len,
                                    const gd_mmr_proof *proof) {
    return proof->leaf_count == leaves && proof->leaf_index == chunk + 1 &&
           gd_payload_verify_chunk(root, chunk, bytes, len, proof);
}

gd_status gd_diloco_check_payload_chunk(const gd_diloco_config *c, size_t n,
                                        const gd_commitment_view *cv,
                                        const gd_leaf_evidence *final,
                                        const gd_leaf_evidence *post,
                                        const gd_chunk_evidence *ev, const float *start_values,
                                        gd_check_result *res) {
    gd_result_begin(res);
    uint32_t S = cv->segments, C = c->chunk_elems, chunk = ev->chunk;
    size_t lo = 0, count = 0;
    if (!gd_values_chunk_range(n, C, chunk, &lo, &count) ||
        cv->payload_leaves != gd_values_chunks(n, C) + 1) {
        gd_refuse(res, "chunk %u is not one of the payload's %u", chunk,
                  cv->payload_leaves ? cv->payload_leaves - 1 : 0);
        return GD_OK;
    }
    const gd_worker_desc *dS = &final->desc, *dp = &post->desc;
    if (!gd_diloco_leaf_proven(cv->transcript_root, S, S, final) ||
        !gd_diloco_leaf_proven(cv->transcript_root, S, S + 1, post) || dS->n != n || dp->n != n)
        gd_refuse(res, "the trained and encoded leaves are not the commitment's");
    else if (!gd_values_verify_chunk(dS->params_root, n, C, chunk, ev->params, count,
                                     &ev->params_proof))
        gd_refuse(res, "chunk %u of the trained parameters is not proved", chunk);
    else if (!gd_values_verify_chunk(dS->residual_root, n, C, chunk, ev->residual_in, count,
                                     &ev->residual_in_proof))
        gd_refuse(res, "chunk %u of the round's starting residual is not proved", chunk);
    else if (!gd_values_verify_chunk(dp->residual_root, n, C, chunk, ev->residual_out, count,
                                     &ev->residual_out_proof))
        gd_refuse(res, "chunk %u of the new residual is not proved", chunk);
    else if (!gd_payload_chunk_proven(cv->payload_root, cv->payload_leaves, chunk, ev->payload,
                                      ev->payload_len, &ev->payload_proof))
        gd_refuse(res, "payload chunk %u is not proved by the committed root", chunk);
    if (!res->pass)
        return GD_OK;
    size_t cap = gd_codec_chunk_bound(&c->codec, count);
    uint8_t *bytes = malloc(cap);
    float *residual = malloc(count * sizeof(float));
    gd_status s = bytes && residual ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    size_t written = 0;
    if (s == GD_OK) {
        memcpy(residual, ev->residual_in, count * sizeof(float));
        s = gd_diloco_encode_chunk(c, bytes, cap, start_values, ev->params, residual, count,
                                   &written);
    }
    if (s == GD_OK) {
        if (written != ev->payload_len || memcmp(bytes, ev->payload, written) != 0)
            gd_refuse(res, "payload chunk %u is not the coding of S_r - θ_H + residual: the "
                           "payload is not the trained state's",
                      chunk);
        else if (memcmp(residual, ev->residual_out, count * sizeof(float)) != 0)
            gd_refuse(res, "chunk %u of the new residual is not what the coding left", chunk);
    } else if (s == GD_ERR_INVALID) {
        /* Non-finite values cannot be coded: the served state is not a
         * training's. */
        gd_refuse(res, "chunk %u cannot be coded: %s", chunk, gd_error_detail());
        s = GD_OK;
    }
    free(bytes);
    free(residual);
    return s;
}

gd_status gd_diloco_overlap_start(const gd_diloco_config *c, float *out, size_t n,
                                  uint32_t chunk, const float *g_prev,
                                  const uint8_t prev_payload_root[32], uint32_t prev_payload_leaves,
                                  const uint8_t *prev_payload, size_t prev_payload_len,
                                  const gd_mmr_proof *prev_proof, bool *ok) {
    *ok = false;
    size_t lo = 0, count = 0;
    if (!gd_values_chunk_range(n, c->chunk_elems, chunk, &lo, &count) ||
        !gd_payload_chunk_proven(prev_payload_root, prev_payload_leaves, chunk, prev_payload,
                                 prev_payload_len, prev_proof))
        return GD_OK;
    if (gd_codec_decode_chunk(&c->codec, prev_payload, prev_payload_len, out, count) != GD_OK)
        return GD_OK;
    for (size_t i = 0; i < count; i++)
        out[i] = g_prev[i] - out[i];
    *ok = true;
    return GD_OK;
}

gd_status gd_diloco_check_start_chunk(size_t n, const gd_commitment_view *cv,
                                      const gd_leaf_evidence *start, uint32_t chunk,
                                      const float *values, const gd_mmr_proof *proof,
                                      const float *start_values, gd_check_result *res) {
    gd_result_begin(res);
    const gd_worker_desc *d0 = &start->desc;
    size_t lo = 0, count = 0;
    if (!gd_diloco_leaf_proven(cv->transcript_root, cv->segments, 0, start) || d0->n != n ||
        !gd_values_chunk_range(n, d0->tag.chunk_elems, chunk, &lo, &count))
        gd_refuse(res, "leaf 0 is not the commitment's, or chunk %u is out of range", chunk);
    else if (!gd_values_verify_chunk(d0->params_root, n, d0->tag.chunk_elems, chunk, values,
                                     count, proof))
        gd_refuse(res, "chunk %u of leaf 0's parameters is not proved", chunk);
    else if (memcmp(values, start_values, count * sizeof(float)) != 0)
        gd_refuse(res, "chunk %u of leaf 0's parameters is not G_{r-1} - Δ̂_{r-1}: the round was "
                       "not trained from its start state",
                  chunk);
    return GD_OK;
}

/* --- segments ---------------------------------------------------------------------------- */

gd_status gd_diloco_verify_segment(gd_trainer *t, const gd_diloco_config *c, const gd_data *data,
                                   const gd_segment_claim *claim, gd_check_result *res) {
    gd_result_begin(res);
    const gd_commitment_view *cv = claim->cv;
    const gd_worker_state_source *in = &claim->start;
    size_t n = gd_trainer_layout(t)->total;
    if (cv->segments == 0 || claim->segment >= cv->segments)
        return gd_fail(GD_ERR_INVALID, "segment %u of a round of %u", claim->segment,
                       cv->segments);
    /* The served state's size first: nothing is loaded from a state that
     * does not have the model's shape. */
    if (claim->residual_root == NULL)
        return gd_fail(GD_ERR_INVALID, "a segment claim needs leaf 0's residual root");
    if (in->n != n || in->read == NULL || in->address == NULL) {
        gd_refuse(res, "the segment's start state has %zu values; the model has %zu", in->n, n);
        return GD_OK;
    }
    uint64_t want_step = claim->first_step + (uint64_t)claim->segment * c->segment_steps;
    if (strcmp(in->address, cv->address) != 0 || in->rank != cv->rank) {
        gd_refuse(res, "the segment's start state is of '%s' rank %u, not '%s' rank %u",
                  in->address, in->rank, cv->address, cv->rank);
        return GD_OK;
    }
    if (in->step != want_step) {
        gd_refuse(res, "the segment's start state is at step %llu, not %llu",
                  (unsigned long long)in->step, (unsigned long long)want_step);
        return GD_OK;
    }
    gd_state_tag tag;
    gd_diloco_state_tag(c, gd_trainer_layout(t), &tag);
    /* Loaded where it lies and hashed as it is loaded: no copy of it. */
    gd_leaf_evidence start_ev = {.proof = *claim->start_proof};
    GD_TRY(gd_diloco_load_source(t, c, &start_ev.desc, cv->round, in, claim->residual_root));
    if (!gd_diloco_leaf_proven(cv->transcript_root, cv->segments, claim->segment, &start_ev)) {
        gd_refuse(res, "the segment's start state is not transcript leaf %u", claim->segment);
        return GD_OK;
    }
    gd_status s = GD_OK;
    gd_leaf_evidence end_ev = {.proof = *claim->end_proof};
    gd_diloco_trace_begin(res->trace);
    for (uint32_t k = 0; s == GD_OK && k < c->segment_steps; k++) {
        gd_step_stats st;
        s = gd_trainer_step(t, data, &st);
        if (s == GD_OK)
            gd_diloco_trace_step(res->trace, st.loss, st.grad_norm);
    }
    /* The end state is hashed from the trainer a window at a time. */
    if (s == GD_OK)
        s = gd_diloco_describe_trainer(t, &tag, &end_ev.desc, cv->round, in->address, cv->rank,
                                       claim->residual_root);
    if (s == GD_OK) {
        gd_worker_desc_hash(&end_ev.desc, res->end_state);
        if (memcmp(res->end_state, claim->end_leaf, GD_MMR_HASH_LEN) != 0)
            gd_refuse(res, "re-executing segment %u does not reach transcript leaf %u",
                      claim->segment, claim->segment + 1);
        else if (!gd_diloco_leaf_proven(cv->transcript_root, cv->segments, claim->segment + 1,
                                        &end_ev))
            gd_refuse(res, "transcript leaf %u is not proved by the committed root",
                      claim->segment + 1);
    }
    return s;
}

/* --- the worker's side ---------------------------------------------------------------------- */

gd_status gd_worker_round_leaf(const gd_worker_round *r, gd_leaf_evidence *out, uint32_t index) {
    if (index >= r->n_leaves)
        return gd_fail(GD_ERR_INVALID, "leaf %u of a transcript of %u", index, r->n_leaves);
    out->desc = r->descs[index];
    return gd_mmr_prove(&r->transcript, &out->proof, index);
}

gd_status gd_worker_round_chunk(gd_pool *pool, const gd_diloco_config *c,
                                const gd_worker_round *r, const gd_worker_state *post,
                                gd_chunk_evidence *out, const float *residual_in,
                                uint32_t chunk) {
    memset(out, 0, sizeof *out);
    size_t lo = 0, count = 0;
    if (!gd_values_chunk_range(post->n, c->chunk_elems, chunk, &lo, &count) ||
        chunk >= r->payload.header.chunk_count)
        return gd_fail(GD_ERR_INVALID, "chunk %u of a payload of %u", chunk,
                       r->payload.header.chunk_count);
    out->chunk = chunk;
    out->params = post->params + lo;
    out->residual_in = residual_in + lo;
    out->residual_out = post->residual + lo;
    out->payload = r->payload.chunks[chunk].raw;
    out->payload_len = r->payload.chunks[chunk].raw_len;
    GD_TRY(gd_values_prove(pool, post->params, post->n, c->chunk_elems, chunk, &out->params_proof));
    GD_TRY(gd_values_prove(pool, residual_in, post->n, c->chunk_elems, chunk,
                           &out->residual_in_proof));
    GD_TRY(gd_values_prove(pool, post->residual, post->n, c->chunk_elems, chunk,
                           &out->residual_out_proof));
    return gd_payload_prove_chunk(&r->payload, &out->payload_proof, chunk);
}
