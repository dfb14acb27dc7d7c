/* The files the demo (plugin/demo/demo_command.c) sets a run up with, made in
 * process by the functions the commands use: the run spec (sim
 * --print-spec's, with windows and incentive knobs a few daemons on a
 * small machine meet, as tests/e2e/node_lib.sh edits it) and each
 * participant's node.yaml (node init's, listening on its own loopback
 * port). */
#ifndef GD_PLUGIN_DEMO_DEMO_SETUP_H
#define GD_PLUGIN_DEMO_DEMO_SETUP_H

#include <stdint.h>

#include "chain/keys/address.h"
#include "common/cli.h"
#include "common/status.h"

/* The demo's model and data, and the batches its evals score. */
#define GD_DEMO_DATA "synthetic:markov:1"
#define GD_DEMO_BATCH 8
#define GD_DEMO_SEQ 64
#define GD_DEMO_EVAL_BATCHES 8
/* Each participant's collateral: the spec's minimum is half of it, so one
 * cheat slash leaves a cheater bonded and a second releases it. */
#define GD_DEMO_COLLATERAL "200000ngonka"

/* Writes run 1's spec for `rounds` rounds to path, for members of
 * hardware class hw_class; *span receives a round's length in blocks.
 * Returns GD_CLI_CONTINUE, or an exit code once the error is printed. */
int gd_demo_write_spec(gd_cli *cli, const char *path, uint64_t rounds, const char *hw_class,
                       int64_t *span);

/* A participant: its home (node.yaml, state/), key file, roles and port. */
typedef struct gd_demo_node {
    const char *home, *key, *rpc_url, *chain_id;
    unsigned roles; /* GD_ROLE_WORKER, GD_ROLE_VALIDATOR */
    uint16_t port;
} gd_demo_node;

/* Creates n->home and writes n->home/node.yaml (parsed back first, as node
 * init does), with one trainer thread: several daemons share the cores. */
gd_status gd_demo_write_node(const gd_demo_node *n) GD_MUST_CHECK;

/* The address of the key in path. */
gd_status gd_demo_key_address(char out[GD_ADDRESS_STR_MAX], const char *path) GD_MUST_CHECK;

/* A loopback TCP port free now (the kernel's pick for port 0). */
gd_status gd_demo_free_port(uint16_t *port) GD_MUST_CHECK;

#endif
