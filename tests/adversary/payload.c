/* Payloads that are not the training's result (tests/adversary/adversary.h):
 * the worker trains honestly and serves an honest transcript, then commits
 * another payload in a valid format: `scaled` codes its Δ times a factor
 * (1000: an outsized step that would swamp the aggregate), `garbage` codes
 * nonsense values of the honest Δ's size. A check re-encodes its drawn chunk
 * from the transcript's trained state and the round's starting residual,
 * and the committed chunk is not that: FAIL, on every chunk drawn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "tests/adversary/adversary.h"
#include "trainer/payload.h"

double g_adv_scale = 1000.0;

typedef enum adv_payload_kind { ADV_SCALED, ADV_GARBAGE } adv_payload_kind;

gd_status gd_adv_commit_values(gd_engine *e, gd_trained_round *out, uint64_t round,
                               const gd_worker_state *w, const float *values) {
    const gd_diloco_config *c = &e->rc.diloco;
    float *residual = calloc(e->n, sizeof *residual);
    if (residual == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_payload_header h = {.run = c->run, .round = round, .param_count = e->n, .codec = c->codec,
                           .chunk_elems = c->chunk_elems};
    snprintf(h.participant, sizeof h.participant, "%s", w->address);
    memcpy(h.layout_digest, e->tag.layout_digest, 32);
    memcpy(h.spec_digest, e->tag.spec_digest, 32);
    gd_payload_free(&out->r.payload);
    gd_buf_free(&out->transcript);
    gd_status s = gd_payload_encode(&out->r.payload, &h, values, residual,
                                    gd_trainer_pool(e->trainer));
    free(residual);
    if (s == GD_OK)
        s = gd_payload_root(&out->r.payload, out->r.payload_root, &out->r.payload_leaves);
    if (s == GD_OK)
        s = gd_engine_round_seal(e, out, round);
    if (s != GD_OK)
        gd_trained_round_free(out);
    return s;
}

static gd_status adv_payload_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                                   const gd_global_state *g, bool fresh, gd_worker_state *w,
                                   adv_payload_kind kind) {
    GD_TRY(gd_engine_train(e, out, round, g, fresh, w));
    size_t n = e->n;
    float *values = malloc(n * sizeof *values);
    if (values == NULL) {
        gd_trained_round_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    /* Δ = start - θ_H, what the honest payload coded. */
    for (size_t i = 0; i < n; i++)
        values[i] = g->params[i] - w->params[i];
    double sq = 0;
    for (size_t i = 0; i < n; i++)
        sq += (double)values[i] * values[i];
    float rms = (float)sqrt(sq / (double)n);
    gd_rng rng;
    uint32_t ids[4] = {0x67617262u, (uint32_t)round, 0, 0}; /* "garb" */
    gd_rng_init(&rng, 7, ids);
    for (size_t i = 0; i < n; i++)
        values[i] = kind == ADV_SCALED ? (float)(values[i] * g_adv_scale)
                                       : (float)((2 * gd_rng_uniform(&rng) - 1) * 1.7 * rms);
    gd_status s = gd_adv_commit_values(e, out, round, w, values);
    free(values);
    return s;
}

gd_status gd_adv_malform_payload(gd_payload *p, uint32_t chunk) {
    if (p->in_file || chunk >= p->header.chunk_count || p->chunks[chunk].raw_len == 0)
        return gd_fail(GD_ERR_INVALID, "adversary: no chunk bytes to malform");
    gd_payload_chunk *c = &p->chunks[chunk];
    if (c->zstd) {
        free(c->stored);
        c->zstd = false;
    }
    c->raw[c->raw_len - 1] = 0x80;
    c->stored = c->raw;
    c->stored_len = c->raw_len;
    uint8_t header[GD_PAYLOAD_HEADER_BYTES], leaf[GD_MMR_HASH_LEN];
    gd_payload_header_encode(&p->header, header);
    gd_mmr_free(&p->mmr);
    gd_mmr_init(&p->mmr);
    gd_mmr_hash_leaf(leaf, 0, header, sizeof header);
    GD_TRY(gd_mmr_append(&p->mmr, leaf));
    for (uint32_t i = 0; i < p->header.chunk_count; i++) {
        gd_mmr_hash_leaf(leaf, i + 1, p->chunks[i].raw, p->chunks[i].raw_len);
        GD_TRY(gd_mmr_append(&p->mmr, leaf));
    }
    return GD_OK;
}

gd_status gd_adv_malformed_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                                 const gd_global_state *g, bool fresh, gd_worker_state *w) {
    GD_TRY(gd_engine_train(e, out, round, g, fresh, w));
    gd_status s = gd_adv_malform_payload(&out->r.payload, 0);
    if (s == GD_OK)
        s = gd_payload_root(&out->r.payload, out->r.payload_root, &out->r.payload_leaves);
    gd_buf_free(&out->transcript); /* sealed again below */
    if (s == GD_OK)
        s = gd_engine_round_seal(e, out, round);
    if (s != GD_OK)
        gd_trained_round_free(out);
    return s;
}

gd_status gd_adv_scaled_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                              const gd_global_state *g, bool fresh, gd_worker_state *w) {
    return adv_payload_train(e, out, round, g, fresh, w, ADV_SCALED);
}

gd_status gd_adv_garbage_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                               const gd_global_state *g, bool fresh, gd_worker_state *w) {
    return adv_payload_train(e, out, round, g, fresh, w, ADV_GARBAGE);
}
