/* The DiLoCo module's table: its messages, queries, genesis, block hook and
 * invariants, each in the file of its concern (diloco_msg_*.c,
 * diloco_queries.c, diloco_genesis.c, diloco_rounds.c, diloco_invariants.c). */
#include "chain/module/diloco_internal.h"

static gd_status dl_begin(gd_app *app, gd_ctx *ctx) {
    (void)app;
    return dl_begin_block(ctx);
}

/* In this order: the message fuzz target picks a route by its index. */
static const gd_msg_route dl_msgs[] = {
    {GD_DILOCO_MSG_CREATE_RUN, &gonka__diloco__v1__msg_create_run__descriptor,
     dl_create_validate, dl_create_execute},
    {GD_DILOCO_MSG_JOIN_RUN, &gonka__diloco__v1__msg_join_run__descriptor,
     dl_join_validate, dl_join_execute},
    {GD_DILOCO_MSG_COMMIT_ROUND, &gonka__diloco__v1__msg_commit_round__descriptor,
     dl_commit_validate, dl_commit_execute},
    {GD_DILOCO_MSG_REPORT_AVAILABILITY, &gonka__diloco__v1__msg_report_availability__descriptor,
     dl_report_validate, dl_report_execute},
    {GD_DILOCO_MSG_SUBMIT_VERDICT, &gonka__diloco__v1__msg_submit_verdict__descriptor,
     dl_verdict_validate, dl_verdict_execute},
    {GD_DILOCO_MSG_DISPUTE, &gonka__diloco__v1__msg_dispute__descriptor,
     dl_dispute_validate, dl_dispute_execute},
    {GD_DILOCO_MSG_ATTEST_ROUND, &gonka__diloco__v1__msg_attest_round__descriptor,
     dl_attest_validate, dl_attest_execute},
    {GD_DILOCO_MSG_CLAIM_REWARDS, &gonka__diloco__v1__msg_claim_rewards__descriptor,
     dl_claim_validate, dl_claim_execute},
    {GD_DILOCO_MSG_RANDOMNESS, &gonka__diloco__v1__msg_randomness__descriptor,
     dl_randomness_validate, dl_randomness_execute},
    {GD_DILOCO_MSG_LEAVE_RUN, &gonka__diloco__v1__msg_leave_run__descriptor,
     dl_leave_validate, dl_leave_execute},
};

static const gd_query_route dl_queries[] = {
    {GD_DILOCO_QUERY_PARAMS, dl_q_params}, {GD_DILOCO_QUERY_RUNS, dl_q_runs},
    {GD_DILOCO_QUERY_RUN, dl_q_run},       {GD_DILOCO_QUERY_ROUND, dl_q_round},
    {GD_DILOCO_QUERY_REWARDS, dl_q_rewards},
};

const gd_module gd_diloco_module = {
    .name = GD_DILOCO_MODULE_NAME,
    .msgs = dl_msgs,
    .n_msgs = sizeof dl_msgs / sizeof dl_msgs[0],
    .queries = dl_queries,
    .n_queries = sizeof dl_queries / sizeof dl_queries[0],
    .init_genesis = dl_init_genesis,
    .export_genesis = dl_export_genesis,
    .begin_block = dl_begin,
    .check_invariants = dl_invariants,
};
