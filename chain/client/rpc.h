/* A client for the CometBFT 0.38 JSON-RPC interface a Gonka node serves
 * (default port 26657), over libcurl: /status, /abci_query,
 * /broadcast_tx_sync, /tx and /block.
 *
 * Calls are JSON-RPC 2.0 POSTs. Transport failures (refused, reset, timed
 * out, HTTP 5xx without a JSON-RPC body, 429) are retried with exponential
 * backoff and full jitter up to max_retries times; every method used here is
 * safe to repeat (a repeated broadcast is answered "tx already exists").
 * A JSON-RPC error is GD_ERR_RPC with code, message and data; a non-zero
 * ABCI code is reported in the result struct (and as GD_ERR_CHAIN by the
 * typed helpers that need success). */
#ifndef GD_CHAIN_CLIENT_RPC_H
#define GD_CHAIN_CLIENT_RPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/client/rpc_parse.h"
#include "chain/client/rpc_types.h"
#include "common/status.h"

typedef struct gd_rpc gd_rpc;

void gd_rpc_options_default(gd_rpc_options *opt);

/* url: http://host:port, https://..., or tcp://host:port (as in Cosmos
 * config files; mapped to http). */
gd_status gd_rpc_open(gd_rpc **out, const char *url, const gd_rpc_options *opt) GD_MUST_CHECK;
void gd_rpc_close(gd_rpc *rpc);

/* Sets the options' cancel flag of an open client (NULL: never). */
void gd_rpc_set_cancel(gd_rpc *rpc, const volatile int *cancel);

/* The JSON-RPC error of the last call that returned GD_ERR_RPC. */
const gd_rpc_error *gd_rpc_last_error(const gd_rpc *rpc);

/* Calls method with params (borrowed; NULL for {}) and returns the result
 * object (new reference). Retries transport failures as described above. */
gd_status gd_rpc_call(gd_rpc *rpc, const char *method, json_t *params,
                      json_t **result) GD_MUST_CHECK;

gd_status gd_rpc_status(gd_rpc *rpc, gd_node_status *out) GD_MUST_CHECK;

/* height 0 = latest. A non-zero ABCI code is returned in out->result with
 * GD_OK: the caller decides (e.g. code 22 "not found" for an account). */
gd_status gd_rpc_abci_query(gd_rpc *rpc, gd_abci_query_result *out, const char *path,
                            const uint8_t *data, size_t len, int64_t height) GD_MUST_CHECK;
void gd_abci_query_result_free(gd_abci_query_result *r);

/* Submits tx bytes and returns the CheckTx outcome. "tx already exists in
 * cache" is reported as code 19 in codespace "sdk" (the mempool already
 * holds exactly these bytes). */
gd_status gd_rpc_broadcast_tx_sync(gd_rpc *rpc, gd_broadcast_result *out, const uint8_t *tx,
                                   size_t len) GD_MUST_CHECK;

/* Looks a transaction up by hash. GD_ERR_NOT_FOUND if the node has not
 * indexed it (yet). */
gd_status gd_rpc_tx(gd_rpc *rpc, gd_tx_result *out, const uint8_t hash[32]) GD_MUST_CHECK;

/* height 0 = latest. */
gd_status gd_rpc_block(gd_rpc *rpc, gd_block_info *out, int64_t height) GD_MUST_CHECK;

#endif
