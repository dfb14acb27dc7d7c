/* The round driver's view over RPC (plugin/ports/chain_reader.h). */
#include "plugin/ports/chain_reader.h"

#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/client/query.h"
#include "chain/wire/epoch.h"

gd_status gd_chain_read_answers(gd_rpc *rpc, uint64_t run, const char *address,
                                gd_chain_answers *a, int64_t *height, gd_claim_state *claims) {
    memset(a, 0, sizeof *a);
    /* The clock first: the view is at most as new as its height says. */
    gd_epoch_info clock;
    GD_TRY(gd_query_epoch_info(rpc, &clock, NULL));
    gd_status s = gd_diloco_query_run(rpc, &a->run, run, NULL);
    if (s == GD_OK && a->run->current_round != NULL)
        s = gd_diloco_query_round(rpc, &a->round, run, a->run->current_round->index, NULL);
    if (s == GD_OK)
        s = gd_diloco_query_rewards(rpc, &a->rewards, address, NULL);
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
