/* The gonka-diloco command line: its command table (keys, tx, query,
 * status, epoch-clock, train, eval, bench train, sim, payload, the
 * training module's tx and query commands, run and demo) on the shared
 * framework in common/cli.h. */
#ifndef GD_PLUGIN_CLI_CLI_H
#define GD_PLUGIN_CLI_CLI_H

#include <stdio.h>

#include "common/cli.h"

/* Entry point used by main() and by the tests (in-process). */
int gd_cli_main(FILE *out, int argc, char **argv, FILE *err);

/* Command groups, defined in cli_keys.c, cli_tx.c and cli_query.c. */
extern const gd_command gd_cmd_version;
extern const gd_command gd_cmd_keys_new, gd_cmd_keys_import, gd_cmd_keys_show;
extern const gd_command gd_cmd_tx_send, gd_cmd_tx_broadcast, gd_cmd_tx_decode;
extern const gd_command gd_cmd_query_account, gd_cmd_query_balance, gd_cmd_query_epoch;
extern const gd_command gd_cmd_status, gd_cmd_epoch_clock;
/* The trainer: cli_train.c and cli_bench.c. */
extern const gd_command gd_cmd_train, gd_cmd_eval, gd_cmd_bench_train, gd_cmd_plan;
/* DiLoCo: cli_payload.c and cli_sim.c. */
extern const gd_command gd_cmd_payload_inspect, gd_cmd_payload_verify, gd_cmd_sim;
/* The DiLoCo training module on chain: cli_diloco*.c and cli_diloco_query.c. */
extern const gd_command gd_cmd_tx_create_run, gd_cmd_tx_join_run, gd_cmd_tx_commit_round,
    gd_cmd_tx_report_availability, gd_cmd_tx_submit_verdict, gd_cmd_tx_dispute,
    gd_cmd_tx_attest_round, gd_cmd_tx_randomness, gd_cmd_tx_leave_run, gd_cmd_tx_claim_rewards;
extern const gd_command gd_cmd_query_diloco_params, gd_cmd_query_runs, gd_cmd_query_run,
    gd_cmd_query_round, gd_cmd_query_rewards, gd_cmd_node_duties, gd_cmd_node_init,
    gd_cmd_node_hardware_class, gd_cmd_node_leave, gd_cmd_node_check;
/* The daemon: cli_run.c; a whole run on this machine: cli_demo.c. */
extern const gd_command gd_cmd_run, gd_cmd_demo;

#endif
