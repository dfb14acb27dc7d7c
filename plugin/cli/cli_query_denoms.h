/* The denoms of a DiLoCo query's amounts, for text output. The module
 * keeps pools, collateral, weights and settle amounts as bare decimal
 * strings in a run's denoms, and the JSON answers keep them so (their
 * shape is the reference); text names the denom, so that "2000000000" is
 * not read as gonka. */
#ifndef GD_PLUGIN_CLI_CLI_QUERY_DENOMS_H
#define GD_PLUGIN_CLI_CLI_QUERY_DENOMS_H

#include <jansson.h>
#include <stdint.h>

#include "chain/client/rpc.h"
#include "common/status.h"

/* Appends the denom to every amount in j, a query answer's JSON
 * (gd_diloco_*_json): from the runs it holds (query run, runs), else from
 * run `run` (query round) or each settle amount's run (query rewards),
 * asked of the node. The run's spec coins carry theirs already. */
gd_status gd_cli_name_denoms(gd_rpc *rpc, uint64_t run, json_t *j) GD_MUST_CHECK;

#endif
