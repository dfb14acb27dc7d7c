/* The round driver's view over RPC (plugin/chain_reader.h). */
#include "plugin/chain_reader.h"

#include <string.h>

#include "chain/diloco_query.h"
#include "chain/epoch.h"
#include "chain/query.h"

void gd_chain_answers_free(gd_chain_answers *a) {
    if (a->run)
        protobuf_c_message_free_unpacked(&a->run->base, NULL);
    if (a->round)
        protobuf_c_message_free_unpacked(&a->round->base, NULL);
    if (a->rewards)
        protobuf_c_message_free_unpacked(&a->rewards->base, NULL);
    memset(a, 0, sizeof *a);
}

gd_claim_state gd_claims_at(const gd_epoch_info *clock) {
    gd_claim_state claims = {false, 0};
    if (clock->epoch.index > 0) {
        gd_epoch_stages st;
        gd_epoch_stages_compute(&st, &clock->epoch, &clock->params);
        claims.open = clock->block_height >= st.claim_money;
        claims.epoch = clock->epoch.index - 1;
    }
    return claims;
}

gd_status gd_chain_read_answers(gd_rpc *rpc, uint64_t run, const char *address,
                                gd_chain_answers *a, int64_t *height, gd_claim_state *claims) {
    memset(a, 0, sizeof *a);
    /* The clock first: the view is at most as new as its height says. */
    gd_epoch_info clock;
    GD_TRY(gd_query_epoch_info(rpc, &clock, NULL));
    gd_status s = gd_diloco_query_run(rpc, run, &a->run, NULL);
    if (s == GD_OK && a->run->current_round != NULL)
        s = gd_diloco_query_round(rpc, run, a->run->current_round->index, &a->round, NULL);
    if (s == GD_OK)
        s = gd_diloco_query_rewards(rpc, address, &a->rewards, NULL);
    if (s != GD_OK) {
        gd_chain_answers_free(a);
        return s;
    }
    *height = clock.block_height;
    *claims = gd_claims_at(&clock);
    return GD_OK;
}

gd_status gd_chain_read_view(gd_rpc *rpc, uint64_t run, const char *address, bool sealed_next,
                             gd_chain_answers *a, gd_chain_view_buf *b) {
    memset(b, 0, sizeof *b);
    int64_t height = 0;
    gd_claim_state claims;
    GD_TRY(gd_chain_read_answers(rpc, run, address, a, &height, &claims));
    gd_status s = gd_chain_view_build(b, address, height, a->run, a->round, a->rewards, &claims,
                                      sealed_next);
    if (s != GD_OK)
        gd_chain_answers_free(a);
    return s;
}
