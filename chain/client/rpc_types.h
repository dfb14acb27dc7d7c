/* Value types of the CometBFT RPC client: options, node status, ABCI
 * outcomes and the results of each call. */
#ifndef GD_CHAIN_CLIENT_RPC_TYPES_H
#define GD_CHAIN_CLIENT_RPC_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"

#define GD_RPC_URL_DEFAULT "http://127.0.0.1:26657"
#define GD_RPC_MAX_RESPONSE (64u << 20) /* refuse answers larger than 64 MiB */
#define GD_CODESPACE_MAX 64
#define GD_LOG_MAX 1024

/* Told, once per call, that the call has waited notice_after_ms for its
 * answer: what it waits for, so a caller can say so. deadline_ms is the
 * call's bound (0 when only the tries bound it). */
typedef void (*gd_rpc_wait_fn)(void *ctx, const char *url, const char *method, long waited_ms,
                               long deadline_ms);

typedef struct gd_rpc_options {
    long timeout_ms;         /* whole request; default 10000 */
    long connect_timeout_ms; /* default 3000 */
    int max_retries;         /* transport retries after the first try; default 3 */
    long retry_base_ms;      /* first backoff; default 200 */
    long retry_cap_ms;       /* largest backoff; default 5000 */
    size_t max_response;     /* refuse larger answers; default GD_RPC_MAX_RESPONSE */
    long deadline_ms;        /* one call, all its tries and backoffs; default 0 = none */
    long notice_after_ms;    /* call on_wait after this long without an answer */
    gd_rpc_wait_fn on_wait;  /* default NULL: nobody is told */
    void *on_wait_ctx;
    /* Non-zero: a call stops with GD_ERR_CANCELLED within a second (its
     * transfer aborted, no further try or backoff), so a daemon asked to
     * stop does not wait out retries on a chain that went away. Default
     * NULL: never. */
    const volatile int *cancel;
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

#endif
