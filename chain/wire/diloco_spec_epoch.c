/* A run spec against the epoch clock it runs on (chain/wire/diloco_spec.h). */
#include <inttypes.h>

#include "chain/wire/diloco_spec.h"

int64_t gd_diloco_spec_round_blocks(const Gonka__Diloco__V1__RunSpec *spec) {
    const Gonka__Diloco__V1__WindowLengths *w = spec->windows;
    return (int64_t)w->train + w->commit + w->reveal + w->verify + w->open + w->dispute +
           w->dispute_open + w->attest + w->attest_open;
}

gd_status gd_diloco_spec_epoch_check(const Gonka__Diloco__V1__RunSpec *spec,
                                     const gd_epoch_params *epoch) {
    int64_t round = gd_diloco_spec_round_blocks(spec);
    int64_t inference = gd_epoch_inference_length(epoch);
    if (round > inference)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: a round takes %" PRId64 " blocks (the windows' sum), more than "
                       "the %" PRId64 " blocks of an epoch's Inference phase (epoch_length %" PRId64
                       " less PoC generation %" PRId64 ", validation delay %" PRId64
                       " and validation %" PRId64 "): no round would ever open",
                       round, inference, epoch->epoch_length, epoch->poc_stage_duration,
                       epoch->poc_validation_delay, epoch->poc_validation_duration);
    return GD_OK;
}

/* The epoch after e. */
static void gd_next_epoch(gd_epoch *e, const gd_epoch_stages *st) {
    e->index++;
    e->poc_start_block_height = st->next_poc_start;
}

int64_t gd_diloco_next_open_height(const gd_epoch *latest, const gd_epoch_params *p,
                                   int64_t from, int64_t round_blocks) {
    gd_epoch e = *latest;
    gd_epoch_stages st;
    gd_epoch_stages_compute(&st, &e, p);
    /* A `from` past the latest epoch's end is in one of the next. */
    for (int k = 0; k < 64 && from >= st.next_poc_start; k++) {
        gd_next_epoch(&e, &st);
        gd_epoch_stages_compute(&st, &e, p);
    }
    for (int i = 0; i < 3 && from < st.next_poc_start; i++) {
        /* Epoch 0 has no PoC: it is Inference throughout. */
        int64_t inference = e.index == 0 ? 0 : st.poc_validation_end;
        int64_t h = from > inference ? from : inference;
        if (h + round_blocks <= st.next_poc_start)
            return h;
        gd_next_epoch(&e, &st);
        gd_epoch_stages_compute(&st, &e, p);
    }
    return -1;
}
