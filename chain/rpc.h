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
#ifndef GD_CHAIN_RPC_H
#define GD_CHAIN_RPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/status.h"

#define GD_RPC_URL_DEFAULT "http://127.0.0.1:26657"
#define GD_RPC_MAX_RESPONSE (64u << 20) /* refuse answers larger than 64 MiB */
#define GD_CODESPACE_MAX 64
#define GD_LOG_MAX 1024

typedef struct gd_rpc_options {
    long timeout_ms;         /* whole request; default 10000 */
    long connect_timeout_ms; /* default 3000 */
    int max_retries;         /* transport retries after the first try; default 3 */
    long retry_base_ms;      /* first backoff; default 200 */
    long retry_cap_ms;       /* largest backoff; default 5000 */
    size_t max_response;     /* refuse larger answers; default GD_RPC_MAX_RESPONSE */
} gd_rpc_options;

/* The JSON-RPC error of the last failed call (code 0 when the failure was
 * not a JSON-RPC error). */
typedef struct gd_rpc_error {
    int64_t code;
    char message[256];
    char data[GD_LOG_MAX];
} gd_rpc_error;

/* An ABCI outcome: code 0 is success; otherwise codespace/code/log say why. */
typedef struct gd_abci_code {
    uint32_t code;
    char codespace[GD_CODESPACE_MAX];
    char log[GD_LOG_MAX];
} gd_abci_code;

typedef struct gd_node_status {
    char network[64]; /* the chain-id */
    char moniker[128];
    char version[64];
    char node_id[64];
    int64_t latest_block_height;
    char latest_block_hash[65];
    char latest_app_hash[65];
    char latest_block_time[40];
    int64_t earliest_block_height;
    bool catching_up;
} gd_node_status;

typedef struct gd_abci_query_result {
    gd_abci_code result;
    int64_t height;
    gd_buf value; /* protobuf response bytes; owned */
} gd_abci_query_result;

typedef struct gd_broadcast_result {
    gd_abci_code result; /* CheckTx outcome */
    char hash[65];       /* the node's hash, upper-case hex */
} gd_broadcast_result;

typedef struct gd_tx_result {
    gd_abci_code result; /* DeliverTx / ExecTxResult outcome */
    char hash[65];
    int64_t height;
    uint32_t index;
    int64_t gas_wanted;
    int64_t gas_used;
} gd_tx_result;

typedef struct gd_block_info {
    int64_t height;
    char chain_id[64];
    char hash[65];
    char time[40];
    char app_hash[65];
    char proposer[65];
    size_t n_txs;
} gd_block_info;

typedef struct gd_rpc gd_rpc;

void gd_rpc_options_default(gd_rpc_options *opt);

/* url: http://host:port, https://..., or tcp://host:port (as in Cosmos
 * config files; mapped to http). */
gd_status gd_rpc_open(gd_rpc **out, const char *url, const gd_rpc_options *opt) GD_MUST_CHECK;
void gd_rpc_close(gd_rpc *rpc);

/* The JSON-RPC error of the last call that returned GD_ERR_RPC. */
const gd_rpc_error *gd_rpc_last_error(const gd_rpc *rpc);

/* Calls method with params (borrowed; NULL for {}) and returns the result
 * object (new reference). Retries transport failures as described above. */
gd_status gd_rpc_call(gd_rpc *rpc, const char *method, json_t *params,
                      json_t **result) GD_MUST_CHECK;

gd_status gd_rpc_status(gd_rpc *rpc, gd_node_status *out) GD_MUST_CHECK;

/* height 0 = latest. A non-zero ABCI code is returned in out->result with
 * GD_OK: the caller decides (e.g. code 22 "not found" for an account). */
gd_status gd_rpc_abci_query(gd_rpc *rpc, const char *path, const uint8_t *data, size_t len,
                            int64_t height, gd_abci_query_result *out) GD_MUST_CHECK;
void gd_abci_query_result_free(gd_abci_query_result *r);

/* Submits tx bytes and returns the CheckTx outcome. "tx already exists in
 * cache" is reported as code 19 in codespace "sdk" (the mempool already
 * holds exactly these bytes). */
gd_status gd_rpc_broadcast_tx_sync(gd_rpc *rpc, const uint8_t *tx, size_t len,
                                   gd_broadcast_result *out) GD_MUST_CHECK;

/* Looks a transaction up by hash. GD_ERR_NOT_FOUND if the node has not
 * indexed it (yet). */
gd_status gd_rpc_tx(gd_rpc *rpc, const uint8_t hash[32], gd_tx_result *out) GD_MUST_CHECK;

/* height 0 = latest. */
gd_status gd_rpc_block(gd_rpc *rpc, int64_t height, gd_block_info *out) GD_MUST_CHECK;

/* --- Response parsing (pure; used by the client and the fuzz targets) ---- */

/* Parses a JSON-RPC response envelope. On success *result is a new
 * reference to "result"; a JSON-RPC "error" gives GD_ERR_RPC with err set. */
gd_status gd_rpc_parse_envelope(const char *body, size_t len, json_t **result,
                                gd_rpc_error *err) GD_MUST_CHECK;

gd_status gd_rpc_parse_status(const json_t *result, gd_node_status *out) GD_MUST_CHECK;
gd_status gd_rpc_parse_abci_query(const json_t *result, gd_abci_query_result *out) GD_MUST_CHECK;
gd_status gd_rpc_parse_broadcast(const json_t *result, gd_broadcast_result *out) GD_MUST_CHECK;
gd_status gd_rpc_parse_tx(const json_t *result, gd_tx_result *out) GD_MUST_CHECK;
gd_status gd_rpc_parse_block(const json_t *result, gd_block_info *out) GD_MUST_CHECK;

/* Renders a non-zero ABCI outcome as one line:
 * "codespace sdk, code 5: <log>" plus a hint for well-known codes. */
void gd_abci_code_describe(const gd_abci_code *code, char *out, size_t cap);

#endif
