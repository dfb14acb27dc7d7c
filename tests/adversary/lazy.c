/* The lazy worker (tests/adversary/adversary.h): it trains only the first
 * rounds' segments and claims the rest. Its segment starts from the first
 * skipped one on are copies of its last trained state, with the step counter
 * a worker would have reached there, so the transcript's links, the
 * payload (the honest encoding of what it did train) and the step counts
 * all look right; it claims the tokens of the whole round. Only a check
 * drawn on a skipped segment catches it: re-executing K steps from a start
 * state does not give that same state back. */
#include <stdlib.h>
#include <string.h>

#include "tests/adversary/adversary.h"
#include "trainer/diloco.h"
#include "trainer/state.h"

double g_adv_lazy_fraction = 0.5;

/* Leaf i of the claimed transcript: the state described at (round, stage). */
static gd_status adv_leaf(gd_engine *e, uint64_t round, gd_state_stage stage,
                          const gd_worker_state *st, gd_worker_round *r, uint32_t i) {
    GD_TRY(gd_worker_state_describe(gd_trainer_pool(e->trainer), &e->tag, &r->descs[i], round,
                                    stage, st));
    gd_worker_desc_hash(&r->descs[i], r->leaves[i]);
    uint8_t leaf[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(leaf, i, r->leaves[i], GD_MMR_HASH_LEN);
    return gd_mmr_append(&r->transcript, leaf);
}

static gd_status adv_claim(gd_engine *e, gd_trained_round *out, uint64_t round, uint32_t segments,
                           uint32_t trained, uint64_t step0, gd_worker_state *w,
                           gd_worker_round *did) {
    const gd_diloco_config *c = &e->rc.diloco;
    uint32_t k = c->segment_steps;
    gd_worker_state *starts = out->starts;
    /* The skipped segments' starts: the trained state, the round's starting
     * residual (training never changes it), the step it claims. */
    for (uint32_t i = trained; i < segments; i++) {
        GD_TRY(gd_worker_state_copy(&starts[i], w));
        memcpy(starts[i].residual, starts[0].residual, w->n * sizeof(float));
        starts[i].step = step0 + (uint64_t)i * k;
    }
    w->step = step0 + (uint64_t)segments * k;
    gd_worker_round *r = &out->r;
    gd_mmr_init(&r->transcript);
    r->n_leaves = segments + 2;
    r->descs = calloc(r->n_leaves, sizeof *r->descs);
    r->leaves = calloc(r->n_leaves, sizeof *r->leaves);
    r->traces = calloc(segments, sizeof *r->traces);
    if (r->descs == NULL || r->leaves == NULL || r->traces == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    /* The traces of what it trained; for the rest, what it never computed:
     * the last trained segment's, the best it can do. */
    for (uint32_t i = 0; i < segments; i++)
        memcpy(r->traces[i], did->traces[i < trained ? i : trained - 1], sizeof r->traces[i]);
    for (uint32_t i = 0; i < segments; i++)
        GD_TRY(adv_leaf(e, round, GD_STAGE_TRAIN, &starts[i], r, i));
    gd_worker_state trained_state;
    GD_TRY(gd_worker_state_copy(&trained_state, w));
    memcpy(trained_state.residual, starts[0].residual, w->n * sizeof(float));
    gd_status s = adv_leaf(e, round, GD_STAGE_TRAIN, &trained_state, r, segments);
    gd_worker_state_free(&trained_state);
    GD_TRY(s);
    GD_TRY(adv_leaf(e, round, GD_STAGE_ENCODED, w, r, segments + 1));
    GD_TRY(gd_mmr_root(&r->transcript, r->transcript_root));
    /* The payload is the honest encoding of what it did train. */
    r->payload = did->payload;
    memset(&did->payload, 0, sizeof did->payload);
    memcpy(r->payload_root, did->payload_root, sizeof r->payload_root);
    r->payload_leaves = did->payload_leaves;
    r->steps = segments * k;
    r->tokens = (uint64_t)r->steps * c->inner.batch * c->inner.seq_len;
    r->loss_sum = did->loss_sum * segments / trained;
    r->first_segment_loss = did->first_segment_loss;
    r->last_segment_loss = did->last_segment_loss;
    r->seconds = did->seconds;
    return GD_OK;
}

gd_status gd_adv_lazy_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                            const gd_global_state *g, bool fresh, gd_worker_state *w) {
    memset(out, 0, sizeof *out);
    const gd_diloco_config *c = &e->rc.diloco;
    uint32_t segments = c->inner_steps / c->segment_steps;
    uint32_t skipped = (uint32_t)(segments * g_adv_lazy_fraction);
    if (skipped >= segments)
        skipped = segments - 1; /* it trains at least one segment */
    uint32_t trained = segments - skipped;
    if (fresh)
        gd_engine_worker_reset(w);
    uint64_t step0 = w->step;
    gd_diloco_config lazy = *c;
    lazy.inner_steps = trained * c->segment_steps;
    out->segments = segments;
    out->starts = calloc(segments, sizeof *out->starts);
    if (out->starts == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_worker_round did;
    memset(&did, 0, sizeof did);
    gd_status s = gd_diloco_worker_round(e->trainer, &lazy, e->data, &did, round, g->params, g->n,
                                         w, out->starts);
    if (s == GD_OK)
        s = adv_claim(e, out, round, segments, trained, step0, w, &did);
    gd_worker_round_free(&did);
    if (s == GD_OK)
        s = gd_engine_round_seal(e, out, round);
    if (s != GD_OK)
        gd_trained_round_free(out);
    return s;
}
