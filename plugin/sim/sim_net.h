/* A run's members in one process: the training module's state machine
 * (chain/module/app.h) as an in-process chain with funded accounts and the
 * run in its genesis, and members (plugin/member/member.h) whose chain port reads
 * that app and queues their transactions for the next block, and whose
 * peer port answers from the other members' gd_member_serve. The same
 * members, driver and engine the daemon runs: `sim --chain` plays a run
 * this way on one machine. */
#ifndef GD_PLUGIN_SIM_SIM_NET_H
#define GD_PLUGIN_SIM_SIM_NET_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "plugin/member/member.h"

#define GD_SIM_NET_MAX 64

typedef struct gd_sim_net gd_sim_net;

/* A chain with run 1 from spec (tx create-run's JSON, which the caller
 * keeps) and n members (1 .. GD_SIM_NET_MAX): members[i] has roles[i], its
 * state under state_dir/member-i, and joins with `collateral`. */
gd_status gd_sim_net_open(gd_sim_net **out, const json_t *spec, size_t n, const unsigned *roles,
                          const char *collateral, const char *state_dir,
                          int threads) GD_MUST_CHECK;
void gd_sim_net_close(gd_sim_net *net);

/* One block: every member steps, then the block with their transactions;
 * *refused counts transactions the chain refused. */
gd_status gd_sim_net_block(gd_sim_net *net, size_t *refused) GD_MUST_CHECK;

int64_t gd_sim_net_height(const gd_sim_net *net);
gd_member *gd_sim_net_member(gd_sim_net *net, size_t i);
/* Query/Round of run 1 (GD_ERR_NOT_FOUND if none; free the answer with
 * protobuf_c_message_free_unpacked). */
gd_status gd_sim_net_round(gd_sim_net *net, Gonka__Diloco__V1__QueryRoundResponse **out,
                           uint64_t round) GD_MUST_CHECK;
/* The run's current round index (false before the first opens). */
bool gd_sim_net_current_round(gd_sim_net *net, uint64_t *round);

#endif
