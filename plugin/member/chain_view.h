/* A node's view of the chain for the round driver (plugin/member/round_driver.h),
 * built from the training module's query answers: the run (Query/Run), its
 * current round in full (Query/Round) and what was settled to the node
 * (Query/Rewards). The one place the driver's view meets the chain's
 * records; it does no I/O (a chain port does the queries). */
#ifndef GD_PLUGIN_MEMBER_CHAIN_VIEW_H
#define GD_PLUGIN_MEMBER_CHAIN_VIEW_H

#include "chain/wire/epoch.h"
#include "common/status.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "plugin/member/round_driver.h"

/* The view and the storage its lists point into. */
typedef struct gd_chain_view_buf {
    gd_chain_view view;
    const char **commitments, **reported, **aggregation;
    gd_view_check *checks;
} gd_chain_view_buf;

/* What the chain's epoch clock says about claims at the view's height. */
typedef struct gd_claim_state {
    bool open;       /* at or past the latest epoch's claim-money stage */
    uint64_t epoch;  /* the epoch that can be claimed (the latest minus one) */
} gd_claim_state;

/* The module's answers a view points into (a chain port reads them). */
typedef struct gd_chain_answers {
    Gonka__Diloco__V1__QueryRunResponse *run;
    Gonka__Diloco__V1__QueryRoundResponse *round; /* NULL: no current round */
    Gonka__Diloco__V1__QueryRewardsResponse *rewards;
} gd_chain_answers;

void gd_chain_answers_free(gd_chain_answers *a);

/* Claims are open from the latest epoch's claim-money stage, for the
 * epoch before it. */
gd_claim_state gd_claims_at(const gd_epoch_info *clock);

/* Fills b from the answers: run (required), round (the run's current round
 * in full, or NULL when it has none), rewards (the node's settle amounts,
 * or NULL). The view's strings point into the answers, which must outlive
 * it. The view's sealed_next is the run's next_sealed list (the seals that
 * landed for the next round) or the node's journal (sealed_next here: a
 * seal it sent, which may not have landed yet). */
gd_status gd_chain_view_build(gd_chain_view_buf *b, const char *address, int64_t height,
                              const Gonka__Diloco__V1__QueryRunResponse *run,
                              const Gonka__Diloco__V1__QueryRoundResponse *round,
                              const Gonka__Diloco__V1__QueryRewardsResponse *rewards,
                              const gd_claim_state *claims, bool sealed_next) GD_MUST_CHECK;
void gd_chain_view_free(gd_chain_view_buf *b);

#endif
