/* Persistence of the localnet chain in SQLite (WAL): the state, blocks and
 * transaction results, written in one SQL transaction per block, so a
 * kill -9 at any moment leaves the last committed block and its state,
 * never a torn one.
 *
 * Tables: meta (chain id, height, app hash, the genesis file's hash), state (the state machine's
 * key-value store), blocks (the /block and /block_results answers as
 * JSON), txs (bytes and result JSON by hash), tx_events (indexed event
 * attributes for /tx_search). */
#ifndef GD_LOCALNET_BLOCKSTORE_H
#define GD_LOCALNET_BLOCKSTORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/module/store.h"
#include "common/bytes.h"
#include "common/status.h"

typedef struct gd_blockstore gd_blockstore;

/* One committed transaction, for the txs and tx_events tables. */
typedef struct gd_stored_tx {
    uint8_t hash[32];
    const uint8_t *tx;
    size_t tx_len;
    const json_t *result; /* ExecTxResult JSON, as /tx shows it */
} gd_stored_tx;

/* One block to persist with the state changes it made. */
typedef struct gd_stored_block {
    int64_t height;
    uint8_t hash[32];
    char time[40];
    uint8_t app_hash[32]; /* after this block */
    const json_t *block;         /* the /block result */
    const json_t *block_results; /* the /block_results result */
    const gd_stored_tx *txs;
    size_t n_txs;
    const gd_store_change *changes;
    size_t n_changes;
} gd_stored_block;

/* Opens (or creates) the store at path after checking it: an empty file,
 * or one SQLite's quick_check finds damaged, is refused (GD_ERR_PARSE)
 * with what to do, rather than taken for a new chain or half read. */
gd_status gd_blockstore_open(gd_blockstore **out, const char *path) GD_MUST_CHECK;
void gd_blockstore_close(gd_blockstore *bs);

/* The last committed height (0 and GD_ERR_NOT_FOUND for a fresh store). */
gd_status gd_blockstore_head(gd_blockstore *bs, int64_t *height, uint8_t app_hash[32],
                             char *chain_id, size_t chain_id_cap) GD_MUST_CHECK;
/* The SHA-256 of the genesis file the chain was started from
 * (GD_ERR_NOT_FOUND before it is recorded), and its recording. */
gd_status gd_blockstore_genesis_hash(gd_blockstore *bs, uint8_t hash[32]) GD_MUST_CHECK;
gd_status gd_blockstore_set_genesis_hash(gd_blockstore *bs,
                                         const uint8_t hash[32]) GD_MUST_CHECK;

/* The earliest stored height (for /status). */
int64_t gd_blockstore_earliest(gd_blockstore *bs);

/* Loads every state entry into store (without recording changes). */
gd_status gd_blockstore_load_state(gd_blockstore *bs, gd_store *store) GD_MUST_CHECK;

/* Writes a block, its transactions and state changes, and the new head,
 * durably and atomically. chain_id is recorded on the first block. */
gd_status gd_blockstore_commit(gd_blockstore *bs, const char *chain_id,
                               const gd_stored_block *block) GD_MUST_CHECK;

/* The stored /block or /block_results JSON of a height (new references);
 * GD_ERR_NOT_FOUND if there is none. */
gd_status gd_blockstore_block_json(gd_blockstore *bs, int64_t height, json_t **block,
                                   json_t **results) GD_MUST_CHECK;

/* A committed transaction by hash: /tx's result object (new reference). */
gd_status gd_blockstore_tx_json(gd_blockstore *bs, json_t **out,
                                const uint8_t hash[32]) GD_MUST_CHECK;

/* /tx_search: conditions "a.b='v'" or "tx.height=N" (also >, <, >=, <=
 * for tx.height) joined by AND; results ordered by height then index,
 * ascending unless desc; page from 1. Returns {"txs": [...], "total_count"}. */
gd_status gd_blockstore_tx_search(gd_blockstore *bs, json_t **out, const char *query,
                                  bool desc, int64_t page, int64_t per_page) GD_MUST_CHECK;

#endif
