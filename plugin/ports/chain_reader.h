/* The round driver's view read from a node over RPC: the run, its current
 * round in full, what was settled to the address and the epoch clock
 * (claims), as the module's typed queries answer them (chain/client/diloco_query.h,
 * chain/client/query.h). The RPC half of the chain port; plugin/member/chain_view.c turns
 * the answers into the view. */
#ifndef GD_PLUGIN_PORTS_CHAIN_READER_H
#define GD_PLUGIN_PORTS_CHAIN_READER_H

#include "chain/client/rpc.h"
#include "plugin/member/chain_view.h"

/* The answers alone (the chain port's read), with the clock's height and
 * claim state. */
gd_status gd_chain_read_answers(gd_rpc *rpc, uint64_t run, const char *address,
                                gd_chain_answers *a, int64_t *height,
                                gd_claim_state *claims) GD_MUST_CHECK;

/* Reads run `run` as `address` sees it into a (free with
 * gd_chain_answers_free) and the view into b (free with gd_chain_view_free
 * first). The view's height is the epoch clock's block height.
 * GD_ERR_NOT_FOUND if the run does not exist. */
gd_status gd_chain_read_view(gd_rpc *rpc, uint64_t run, const char *address, bool sealed_next,
                             gd_chain_answers *a, gd_chain_view_buf *b) GD_MUST_CHECK;

#endif
