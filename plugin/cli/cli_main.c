/* gonka-diloco's command table. */
#include "plugin/cli/cli.h"

static const gd_command *const gd_commands[] = {
    &gd_cmd_version,       &gd_cmd_keys_new,      &gd_cmd_keys_import, &gd_cmd_keys_show,   &gd_cmd_tx_send,
    &gd_cmd_tx_broadcast,  &gd_cmd_tx_decode,   &gd_cmd_query_account,
    &gd_cmd_query_balance, &gd_cmd_query_epoch, &gd_cmd_status,      &gd_cmd_epoch_clock,
    &gd_cmd_train,         &gd_cmd_eval,        &gd_cmd_bench_train, &gd_cmd_plan,
    &gd_cmd_sim,           &gd_cmd_payload_inspect, &gd_cmd_payload_verify,
    &gd_cmd_tx_create_run, &gd_cmd_tx_join_run, &gd_cmd_tx_commit_round,
    &gd_cmd_tx_report_availability, &gd_cmd_tx_submit_verdict, &gd_cmd_tx_dispute,
    &gd_cmd_tx_attest_round, &gd_cmd_tx_randomness, &gd_cmd_tx_leave_run,
    &gd_cmd_tx_claim_rewards,
    &gd_cmd_query_diloco_params, &gd_cmd_query_runs, &gd_cmd_query_run,
    &gd_cmd_query_round, &gd_cmd_query_rewards, &gd_cmd_node_init, &gd_cmd_node_duties,
    &gd_cmd_node_hardware_class, &gd_cmd_node_leave, &gd_cmd_node_check, &gd_cmd_run,      &gd_cmd_demo,
};

static const gd_cli_program gd_program = {
    .name = "gonka-diloco",
    .summary = "DiLoCo training for Gonka hosts (chain client, trainer).",
    .version = GD_VERSION,
    .commands = gd_commands,
    .n_commands = sizeof gd_commands / sizeof gd_commands[0],
};

int gd_cli_main(FILE *out, int argc, char **argv, FILE *err) {
    return gd_cli_run(&gd_program, out, argc, argv, err);
}
