/* Why a run has no round R yet, and when it will: the hint an error of
 * the module's "no such round" code carries, so that "run 1 has no round
 * 0" says what a round waits for (members sealed for it, the previous
 * round's end, an Inference phase with room for all its windows) and at
 * which height it can open. */
#ifndef GD_PLUGIN_CLI_CLI_ROUND_HINT_H
#define GD_PLUGIN_CLI_CLI_ROUND_HINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/client/query.h"
#include "chain/client/rpc.h"

/* The module's code for a round that does not exist or is not current
 * (chain/module/diloco.h, GD_DILOCO_ERR_UNKNOWN_ROUND). */
#define GD_CLI_DILOCO_UNKNOWN_ROUND 8

/* True if err is the module's unknown-round code. */
bool gd_cli_is_unknown_round(const gd_abci_code *code);

/* Writes the hint for run's round into out (one clause, no newline), asked
 * of the node: the run, its current round and sealed members, and the
 * epoch clock. Empty when the node cannot say. */
void gd_cli_round_hint(gd_rpc *rpc, char *out, size_t cap, uint64_t run, uint64_t round);

#endif
