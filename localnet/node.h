/* A single-validator chain node: the state machine (chain/module), a
 * mempool, a block producer on a timer and the SQLite block store. The RPC
 * server (rpc_server.c) calls the gd_node_* functions below; every one is
 * thread-safe (one lock serialises the state machine). */
#ifndef GD_LOCALNET_NODE_H
#define GD_LOCALNET_NODE_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/module/app.h"
#include "common/status.h"

typedef struct gd_node gd_node;

typedef struct gd_node_config {
    char home[512];
    /* The minimum gas price (chain/wire/gas_price.h); "" takes the one home's
     * app.json records (init writes it), else GD_GAS_PRICE_DEFAULT. "0"
     * accepts zero fees. */
    char min_gas_price[GD_GAS_PRICE_TEXT_MAX + 1];
    size_t mempool_max;   /* default 10000 */
    size_t max_block_txs; /* default 10000 */
    long block_time_ms;   /* default 500 */
    /* Block times from genesis_time + height * block_time instead of the
     * wall clock: a reproducible chain (tests, demos). */
    bool deterministic_time;
    /* Checks every module's invariants after each block, before it is
     * stored; a broken one stops the node with the invariant's name. */
    bool check_invariants;
} gd_node_config;

void gd_node_config_default(gd_node_config *cfg);

/* Opens home: genesis.json, app.json (node policy, optional), the
 * validator key and data/chain.db; restores
 * the last committed state (checking its app hash) or initialises from
 * genesis. */
gd_status gd_node_open(gd_node **out, const gd_node_config *cfg) GD_MUST_CHECK;
void gd_node_close(gd_node *node);

/* Produces and commits one block from the mempool. */
gd_status gd_node_produce_block(gd_node *node) GD_MUST_CHECK;

/* Produces a block every block_time until *stop becomes non-zero. */
gd_status gd_node_run_blocks(gd_node *node, volatile sig_atomic_t *stop) GD_MUST_CHECK;

/* broadcast_tx_*: CheckTx and admission to the mempool. GD_ERR_EXISTS
 * when the mempool already holds these bytes ("tx already exists in
 * cache"), GD_ERR_LIMIT when it is full or the tx is too large. The
 * CheckTx outcome (code, log) is in out; hash is the upper-case hex txhash. */
gd_status gd_node_broadcast(gd_node *node, gd_tx_outcome *out, const uint8_t *tx, size_t len,
                            char hash[65]) GD_MUST_CHECK;

/* JSON answers in CometBFT 0.38's shapes (new references). */
gd_status gd_node_status_json(gd_node *node, json_t **out, const char *rpc_address) GD_MUST_CHECK;
gd_status gd_node_abci_info_json(gd_node *node, json_t **out) GD_MUST_CHECK;
gd_status gd_node_abci_query_json(gd_node *node, json_t **out, const char *path,
                                  const uint8_t *data, size_t len, int64_t height) GD_MUST_CHECK;
gd_status gd_node_block_json(gd_node *node, json_t **out, int64_t height) GD_MUST_CHECK;
gd_status gd_node_block_results_json(gd_node *node, json_t **out, int64_t height) GD_MUST_CHECK;
gd_status gd_node_tx_json(gd_node *node, json_t **out, const uint8_t *hash,
                          size_t len) GD_MUST_CHECK;
gd_status gd_node_tx_search_json(gd_node *node, json_t **out, const char *query, bool desc,
                                 int64_t page, int64_t per_page) GD_MUST_CHECK;
gd_status gd_node_genesis_json(gd_node *node, json_t **out) GD_MUST_CHECK;
gd_status gd_node_unconfirmed_json(gd_node *node, json_t **out) GD_MUST_CHECK;

int64_t gd_node_height(gd_node *node);
/* The app_state of the committed state as a genesis document. */
gd_status gd_node_export(gd_node *node, json_t **genesis) GD_MUST_CHECK;
/* Checks every module invariant on the committed state. */
gd_status gd_node_check_invariants(gd_node *node) GD_MUST_CHECK;

#endif
