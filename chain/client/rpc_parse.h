/* Parsing of CometBFT JSON-RPC answers into typed results: pure functions,
 * used by the client and by the fuzz targets. */
#ifndef GD_CHAIN_CLIENT_RPC_PARSE_H
#define GD_CHAIN_CLIENT_RPC_PARSE_H

#include <jansson.h>

#include "chain/client/rpc_types.h"
#include "common/status.h"

/* Parses a JSON-RPC response envelope. On success *result is a new
 * reference to "result"; a JSON-RPC "error" gives GD_ERR_RPC with err set. */
gd_status gd_rpc_parse_envelope(const char *body, size_t len, json_t **result,
                                gd_rpc_error *err) GD_MUST_CHECK;

gd_status gd_rpc_parse_status(gd_node_status *out, const json_t *result) GD_MUST_CHECK;
gd_status gd_rpc_parse_abci_query(gd_abci_query_result *out, const json_t *result) GD_MUST_CHECK;
gd_status gd_rpc_parse_broadcast(gd_broadcast_result *out, const json_t *result) GD_MUST_CHECK;
gd_status gd_rpc_parse_tx(gd_tx_result *out, const json_t *result) GD_MUST_CHECK;
gd_status gd_rpc_parse_block(gd_block_info *out, const json_t *result) GD_MUST_CHECK;

/* Renders a non-zero ABCI outcome as one line:
 * "codespace sdk, code 5: <log>" plus a hint for well-known codes. */
void gd_abci_code_describe(const gd_abci_code *code, char *out, size_t cap);

#endif
