/* The localnet node: state machine + mempool + block producer + store. */
#include "localnet/node.h"

#include <errno.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain/wire/tx.h"
#include "common/bytes.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/rfc3339.h"
#include "localnet/blockstore.h"
#include "localnet/cometbft_json.h"
#include "localnet/init.h"
#include "localnet/validator.h"

#define GD_MAX_TX_BYTES 1048576 /* CometBFT's default mempool max_tx_bytes */
#define GD_VALIDATOR_POWER 10
#define GD_APP_CONFIG_MAX 65536 /* app.json holds one short key */

typedef struct gd_mempool_tx {
    uint8_t *tx;
    size_t len;
    uint8_t hash[32];
} gd_mempool_tx;

struct gd_node {
    gd_node_config cfg;
    pthread_mutex_t lock;
    gd_app *app;
    gd_blockstore *bs;
    json_t *genesis;
    char chain_id[GD_CHAIN_ID_MAX + 1];
    uint8_t genesis_sha256[32]; /* of genesis.json's bytes */
    gd_time genesis_time; /* for deterministic block times */
    gd_validator_key validator;
    gd_mempool_tx *mempool;
    size_t mempool_n, mempool_cap, mempool_bytes;
    /* the previous block, for the next header */
    uint8_t last_block_hash[32];
    bool has_last_block;
    uint8_t last_results_hash[32];
    char last_block_time[40];
    gd_time last_time; /* last_block_time parsed, when has_last_block */
    int64_t earliest_height;
};

void gd_node_config_default(gd_node_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->mempool_max = 10000;
    cfg->max_block_txs = 10000;
    cfg->block_time_ms = 500;
}

/* --- time -------------------------------------------------------------------- */

/* A block's time, RFC 3339 with nine fraction digits in UTC as CometBFT
 * prints them: the wall clock, or with deterministic_time genesis_time +
 * height x block_time. Either way it is later than the previous block's, as
 * CometBFT requires of a header: a clock set back, or a chain first run on
 * the wall clock and restarted with deterministic_time (whose schedule then
 * lies in its past), gets the previous block's time plus 1 ms instead. */
static gd_status gd_block_time(gd_node *node, char out[40], int64_t height, gd_time *out_t) {
    gd_time t;
    if (node->cfg.deterministic_time) {
        t = gd_time_add_ms(node->genesis_time, height * node->cfg.block_time_ms);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        t = (gd_time){.unix_s = (int64_t)ts.tv_sec, .nanos = (int32_t)ts.tv_nsec};
    }
    if (node->has_last_block && gd_time_cmp(t, node->last_time) <= 0)
        t = gd_time_add_ms(node->last_time, 1);
    GD_TRY(gd_rfc3339_format(out, 40, t, true));
    *out_t = t;
    return GD_OK;
}

/* With deterministic_time on a chain whose last block is later than the
 * schedule says, the schedule is not followed until it catches up: said
 * once, at start, rather than silently. */
static void gd_warn_time_behind(gd_node *node, int64_t height) {
    gd_time next = gd_time_add_ms(node->genesis_time, (height + 1) * node->cfg.block_time_ms);
    if (node->cfg.deterministic_time && node->has_last_block &&
        gd_time_cmp(next, node->last_time) <= 0)
        GD_LOG_WARN("localnet", "--deterministic-time: block %lld would be at genesis time + "
                    "height x block time, before the last block's time %s; block times go on "
                    "1 ms apart from there until the schedule catches up",
                    (long long)height + 1, node->last_block_time);
}

/* --- opening ------------------------------------------------------------------ */

static gd_status gd_path(char *out, size_t cap, const char *home, const char *name) {
    int n = snprintf(out, cap, "%s/%s", home, name);
    return n > 0 && (size_t)n < cap ? GD_OK : gd_fail(GD_ERR_INVALID, "home path too long");
}

/* The store keeps the SHA-256 of the genesis file its chain began from:
 * a genesis.json edited since would otherwise be ignored (the state comes
 * from the store) while /genesis and export serve the edited one. Until
 * the first block is stored the chain has not begun, and the hash is
 * (re)recorded; a store from before the hash was kept records it now. */
static gd_status gd_node_genesis_check(gd_node *node, bool begun) {
    uint8_t stored[32];
    gd_status s = gd_blockstore_genesis_hash(node->bs, stored);
    if (s == GD_OK && begun && memcmp(stored, node->genesis_sha256, 32) != 0) {
        char now[65], then[65];
        gd_hex_encode(now, node->genesis_sha256, 32, false);
        gd_hex_encode(then, stored, 32, false);
        return gd_fail(GD_ERR_PARSE, "%s/genesis.json has changed since the chain in %s/data "
                       "began: its SHA-256 is %s, the chain began from %s. Put the original "
                       "genesis.json back, or remove %s/data to start a new chain from the "
                       "edited one", node->cfg.home, node->cfg.home, now, then, node->cfg.home);
    }
    if (s == GD_OK && begun)
        return GD_OK;
    if (s != GD_OK && s != GD_ERR_NOT_FOUND)
        return s;
    return gd_blockstore_set_genesis_hash(node->bs, node->genesis_sha256);
}

static gd_status gd_node_restore(gd_node *node) {
    int64_t height = 0;
    uint8_t app_hash[32];
    char chain_id[GD_CHAIN_ID_MAX + 1];
    gd_status s = gd_blockstore_head(node->bs, &height, app_hash, chain_id, sizeof chain_id);
    if (s != GD_OK && s != GD_ERR_NOT_FOUND)
        return s;
    GD_TRY(gd_node_genesis_check(node, s == GD_OK));
    if (s == GD_ERR_NOT_FOUND) {
        GD_LOG_INFO("localnet", "initialising chain %s from genesis", node->chain_id);
        return gd_app_init_chain(node->app, node->genesis);
    }
    if (strcmp(chain_id, node->chain_id) != 0)
        return gd_fail(GD_ERR_PARSE, "the data directory holds chain %s but genesis.json says %s",
                       chain_id, node->chain_id);
    GD_TRY(gd_blockstore_load_state(node->bs, gd_app_store(node->app)));
    GD_TRY(gd_app_restored(node->app, chain_id, height, app_hash));
    /* The last block's hash and results hash feed the next header. */
    json_t *block = NULL, *results = NULL;
    GD_TRY(gd_blockstore_block_json(node->bs, height, &block, &results));
    const char *hash = json_string_value(json_object_get(json_object_get(block, "block_id"), "hash"));
    const char *time = json_string_value(
        json_object_get(json_object_get(json_object_get(block, "block"), "header"), "time"));
    const char *rh = json_string_value(json_object_get(results, "gd_results_hash"));
    size_t n = 0;
    if (hash == NULL || gd_hex_decode(node->last_block_hash, 32, &n, hash, strlen(hash)) != GD_OK ||
        n != 32 || rh == NULL ||
        gd_hex_decode(node->last_results_hash, 32, &n, rh, strlen(rh)) != GD_OK || n != 32) {
        s = gd_fail(GD_ERR_PARSE, "database: block %lld is damaged", (long long)height);
    } else {
        snprintf(node->last_block_time, sizeof node->last_block_time, "%s", time ? time : "");
        if (gd_rfc3339_parse(&node->last_time, node->last_block_time) == GD_OK)
            node->has_last_block = true;
        else
            s = gd_fail(GD_ERR_PARSE, "database: block %lld has a bad time", (long long)height);
    }
    if (s == GD_OK)
        gd_warn_time_behind(node, height);
    json_decref(block);
    json_decref(results);
    GD_LOG_INFO("localnet", "restored chain %s at height %lld", chain_id, (long long)height);
    return s;
}

/* app.json's min_gas_price into out; GD_ERR_NOT_FOUND when the home has no
 * app.json. The file holds that one key: anything else (a misspelt key
 * such as app.toml's minimum-gas-prices) is refused, not ignored. */
static gd_status gd_read_app_config(char *out, size_t cap, const char *home) {
    char path[600];
    GD_TRY(gd_path(path, sizeof path, home, GD_LOCALNET_APP_CONFIG));
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return GD_ERR_NOT_FOUND;
        return gd_fail(GD_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    }
    json_error_t err;
    gd_buf text = {0};
    GD_TRY(gd_file_read(&text, path, GD_APP_CONFIG_MAX));
    json_t *app = json_loadb((const char *)text.data, text.len, JSON_REJECT_DUPLICATES, &err);
    gd_buf_free(&text);
    if (app == NULL)
        return gd_fail(GD_ERR_PARSE, "%s: %s (line %d)", path, err.text, err.line);
    gd_status s = GD_OK;
    const char *key;
    json_t *value;
    json_object_foreach(app, key, value) {
        if (s == GD_OK && (strcmp(key, "min_gas_price") != 0 || !json_is_string(value)))
            s = gd_fail(GD_ERR_PARSE, "%s: unexpected '%.40s' (it holds \"min_gas_price\": "
                        "\"%s\" and nothing else)", path, key, GD_GAS_PRICE_DEFAULT);
    }
    const char *price = json_string_value(json_object_get(app, "min_gas_price"));
    if (s == GD_OK && (price == NULL || strlen(price) >= cap))
        s = gd_fail(GD_ERR_PARSE, "%s has no valid min_gas_price", path);
    if (s == GD_OK)
        snprintf(out, cap, "%s", price);
    json_decref(app);
    return s;
}

/* The minimum gas price: --min-gas-price, else what the home's app.json
 * records, else the default (a home made before init wrote app.json). */
static gd_status gd_node_min_gas_price(const gd_node_config *cfg, char *out, size_t cap) {
    const char *from = "--min-gas-price";
    if (cfg->min_gas_price[0]) {
        snprintf(out, cap, "%s", cfg->min_gas_price);
    } else {
        gd_status s = gd_read_app_config(out, cap, cfg->home);
        from = s == GD_OK ? GD_LOCALNET_APP_CONFIG : "the default";
        if (s == GD_ERR_NOT_FOUND)
            snprintf(out, cap, "%s", GD_GAS_PRICE_DEFAULT);
        else if (s != GD_OK)
            return s;
    }
    gd_gas_price p;
    if (gd_gas_price_parse(&p, out) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "minimum gas price from %s", from);
    GD_LOG_INFO("localnet", "minimum gas price %s (from %s)%s", out, from,
                gd_gas_price_is_zero(&p) ? ": zero fees accepted" : "");
    return GD_OK;
}

/* genesis.json's genesis_time, which every block time follows. */
static gd_status gd_node_genesis_time(gd_node *node, const char *path) {
    const char *text = json_string_value(json_object_get(node->genesis, "genesis_time"));
    if (text == NULL)
        return gd_fail(GD_ERR_PARSE, "%s has no genesis_time", path);
    if (gd_rfc3339_parse(&node->genesis_time, text) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "%s: genesis_time", path);
    return GD_OK;
}

gd_status gd_node_open(gd_node **out, const gd_node_config *cfg) {
    gd_node *node = calloc(1, sizeof *node);
    if (node == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    node->cfg = *cfg;
    if (node->cfg.mempool_max == 0)
        node->cfg.mempool_max = 10000;
    if (node->cfg.max_block_txs == 0)
        node->cfg.max_block_txs = 10000;
    if (node->cfg.block_time_ms <= 0)
        node->cfg.block_time_ms = 500;
    pthread_mutex_init(&node->lock, NULL);
    char path[600];
    gd_buf text = {0};
    gd_status s = gd_path(path, sizeof path, cfg->home, "genesis.json");
    if (s == GD_OK)
        s = gd_file_read(&text, path, 64u << 20);
    if (s == GD_OK)
        gd_sha256(node->genesis_sha256, text.data, text.len);
    if (s == GD_OK) {
        json_error_t err;
        node->genesis = json_loadb((const char *)text.data, text.len, JSON_REJECT_DUPLICATES, &err);
        if (node->genesis == NULL || !json_is_object(node->genesis))
            s = gd_fail(GD_ERR_PARSE, "%s: %s (line %d)", path,
                        node->genesis ? "not a JSON object" : err.text, err.line);
    }
    gd_buf_free(&text);
    const char *chain_id = json_string_value(json_object_get(node->genesis, "chain_id"));
    if (s == GD_OK && (chain_id == NULL || chain_id[0] == '\0' || strlen(chain_id) > GD_CHAIN_ID_MAX))
        s = gd_fail(GD_ERR_PARSE, "%s has no valid chain_id", path);
    if (s == GD_OK) {
        snprintf(node->chain_id, sizeof node->chain_id, "%s", chain_id);
        s = gd_node_genesis_time(node, path);
    }
    if (s == GD_OK) {
        s = gd_path(path, sizeof path, cfg->home, "priv_validator_key.json");
    }
    if (s == GD_OK)
        s = gd_validator_key_load(&node->validator, path);
    gd_app_config app_cfg = {0};
    if (s == GD_OK)
        s = gd_node_min_gas_price(cfg, app_cfg.min_gas_price, sizeof app_cfg.min_gas_price);
    if (s == GD_OK)
        s = gd_app_new(&node->app, &app_cfg);
    if (s == GD_OK)
        s = gd_app_register_standard(node->app);
    if (s == GD_OK)
        s = gd_path(path, sizeof path, cfg->home, "data");
    if (s == GD_OK && mkdir(path, 0700) != 0 && errno != EEXIST)
        s = gd_fail(GD_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    if (s == GD_OK)
        s = gd_path(path, sizeof path, cfg->home, "data/chain.db");
    if (s == GD_OK)
        s = gd_blockstore_open(&node->bs, path);
    if (s == GD_OK)
        s = gd_node_restore(node);
    if (s != GD_OK) {
        gd_node_close(node);
        return s;
    }
    node->earliest_height = gd_blockstore_earliest(node->bs);
    *out = node;
    return GD_OK;
}

void gd_node_close(gd_node *node) {
    if (node == NULL)
        return;
    for (size_t i = 0; i < node->mempool_n; i++)
        free(node->mempool[i].tx);
    free(node->mempool);
    gd_blockstore_close(node->bs);
    gd_app_free(node->app);
    json_decref(node->genesis);
    gd_validator_key_wipe(&node->validator);
    pthread_mutex_destroy(&node->lock);
    free(node);
}

int64_t gd_node_height(gd_node *node) {
    pthread_mutex_lock(&node->lock);
    int64_t h = gd_app_height(node->app);
    pthread_mutex_unlock(&node->lock);
    return h;
}

/* --- mempool ------------------------------------------------------------------- */

static bool gd_mempool_has(const gd_node *node, const uint8_t hash[32]) {
    for (size_t i = 0; i < node->mempool_n; i++)
        if (memcmp(node->mempool[i].hash, hash, 32) == 0)
            return true;
    return false;
}

static void gd_log_rejected(const char *hash, const gd_tx_outcome *o) {
    GD_LOG_INFO("localnet", "rejected tx %.16s: code %u (%s): %s", hash, o->err.code,
                o->err.codespace, o->err.log);
}

gd_status gd_node_broadcast(gd_node *node, gd_tx_outcome *out, const uint8_t *tx, size_t len,
                            char hash_hex[65]) {
    uint8_t hash[32];
    memset(out, 0, sizeof *out);
    gd_tx_hash(hash, hash_hex, tx, len);
    if (len > GD_MAX_TX_BYTES)
        return gd_fail(GD_ERR_LIMIT, "tx too large. Max size is %d, but got %zu", GD_MAX_TX_BYTES,
                       len);
    pthread_mutex_lock(&node->lock);
    gd_status s = GD_OK;
    if (gd_mempool_has(node, hash)) {
        s = gd_fail(GD_ERR_EXISTS, "tx already exists in cache");
    } else if (node->mempool_n >= node->cfg.mempool_max) {
        s = gd_fail(GD_ERR_LIMIT, "mempool is full: number of txs %zu (max: %zu), total txs bytes "
                                  "%zu", node->mempool_n, node->cfg.mempool_max,
                    node->mempool_bytes);
    } else {
        s = gd_app_check_tx(node->app, out, tx, len);
    }
    if (s == GD_OK && out->err.code == 0) {
        if (node->mempool_n == node->mempool_cap) {
            size_t cap = node->mempool_cap ? node->mempool_cap * 2 : 256;
            gd_mempool_tx *m = realloc(node->mempool, cap * sizeof *m);
            if (m == NULL)
                s = gd_fail(GD_ERR_NOMEM, "out of memory for the mempool");
            else {
                node->mempool = m;
                node->mempool_cap = cap;
            }
        }
        uint8_t *copy = s == GD_OK ? malloc(len) : NULL;
        if (s == GD_OK && copy == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory for the mempool");
        if (s == GD_OK) {
            memcpy(copy, tx, len);
            gd_mempool_tx *m = &node->mempool[node->mempool_n++];
            m->tx = copy;
            m->len = len;
            memcpy(m->hash, hash, 32);
            node->mempool_bytes += len;
        }
    }
    pthread_mutex_unlock(&node->lock);
    if (s == GD_OK && out->err.code != 0)
        gd_log_rejected(hash_hex, out);
    return s;
}

/* Re-checks the mempool against the new check state; drops what fails now. */
static void gd_mempool_recheck(gd_node *node) {
    size_t keep = 0;
    for (size_t i = 0; i < node->mempool_n; i++) {
        gd_mempool_tx *m = &node->mempool[i];
        gd_tx_outcome o;
        gd_status s = gd_app_check_tx(node->app, &o, m->tx, m->len);
        bool ok = s == GD_OK && o.err.code == 0;
        gd_tx_outcome_free(&o);
        if (ok) {
            node->mempool[keep++] = *m;
        } else {
            node->mempool_bytes -= m->len;
            free(m->tx);
        }
    }
    node->mempool_n = keep;
}

/* --- blocks --------------------------------------------------------------------- */

/* The header's fields in a fixed order; the block hash is their merkle root. */
typedef struct gd_header {
    int64_t height;
    char time[40];
    uint8_t last_block_hash[32];
    bool has_last_block;
    uint8_t data_hash[32];
    uint8_t validators_hash[32];
    uint8_t consensus_hash[32];
    uint8_t app_hash[32];
    uint8_t last_results_hash[32];
    uint8_t evidence_hash[32];
    uint8_t proposer[20];
} gd_header;

static gd_status gd_header_hash(const gd_node *node, const gd_header *h, uint8_t out[32]) {
    uint8_t height[8];
    for (int i = 0; i < 8; i++)
        height[i] = (uint8_t)((uint64_t)h->height >> (56 - 8 * i));
    const uint8_t *items[] = {(const uint8_t *)"11",
                              (const uint8_t *)node->chain_id,
                              height,
                              (const uint8_t *)h->time,
                              h->last_block_hash,
                              h->data_hash,
                              h->validators_hash,
                              h->validators_hash,
                              h->consensus_hash,
                              h->app_hash,
                              h->last_results_hash,
                              h->evidence_hash,
                              h->proposer};
    const size_t lens[] = {2, strlen(node->chain_id), 8, strlen(h->time),
                           h->has_last_block ? 32u : 0u, 32, 32, 32, 32, 32, 32, 32, 20};
    return gd_merkle_root(out, items, lens, sizeof lens / sizeof lens[0]);
}

static json_t *gd_block_id_json(const uint8_t hash[32], bool present) {
    uint8_t part[32];
    gd_sha256(part, hash, 32);
    if (!present)
        return json_pack("{s:s,s:{s:i,s:s}}", "hash", "", "parts", "total", 0, "hash", "");
    return json_pack("{s:o,s:{s:i,s:o}}", "hash", gd_json_hex(hash, 32, true), "parts", "total", 1,
                     "hash", gd_json_hex(part, 32, true));
}

/* Builds the /block result for a produced block. */
static json_t *gd_block_json(gd_node *node, const gd_header *h, const uint8_t hash[32],
                             const gd_mempool_tx *txs, size_t n) {
    json_t *tx_list = json_array();
    for (size_t i = 0; tx_list && i < n; i++)
        json_array_append_new(tx_list, gd_json_base64(txs[i].tx, txs[i].len));
    /* The commit for the previous block, signed by the validator over
     * SHA256("gonka-localnet/commit" || chain_id || BE64(height-1) || hash). */
    json_t *sigs = json_array();
    if (h->has_last_block && sigs) {
        uint8_t msg[32], sig[64];
        gd_sha256_ctx *c = NULL;
        uint8_t be[8];
        for (int i = 0; i < 8; i++)
            be[i] = (uint8_t)((uint64_t)(h->height - 1) >> (56 - 8 * i));
        if (gd_sha256_begin(&c) == GD_OK) {
            gd_sha256_update(c, "gonka-localnet/commit", 21);
            gd_sha256_update(c, node->chain_id, strlen(node->chain_id));
            gd_sha256_update(c, be, 8);
            gd_sha256_update(c, h->last_block_hash, 32);
            gd_sha256_finish(c, msg);
            if (gd_validator_sign(&node->validator, msg, 32, sig) == GD_OK)
                json_array_append_new(
                    sigs, json_pack("{s:i,s:o,s:s,s:o}", "block_id_flag", 2, "validator_address",
                                    gd_json_hex(node->validator.address, 20, true), "timestamp",
                                    node->last_block_time, "signature", gd_json_base64(sig, 64)));
        }
    }
    json_t *header = json_pack(
        "{s:{s:s,s:s},s:s,s:o,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "version", "block",
        "11", "app", "0", "chain_id", node->chain_id, "height", gd_cmt_int64(h->height), "time",
        h->time, "last_block_id", gd_block_id_json(h->last_block_hash, h->has_last_block),
        "last_commit_hash", h->has_last_block ? gd_json_hex(h->last_block_hash, 32, true) : json_string(""),
        "data_hash", gd_json_hex(h->data_hash, 32, true), "validators_hash",
        gd_json_hex(h->validators_hash, 32, true), "next_validators_hash",
        gd_json_hex(h->validators_hash, 32, true), "consensus_hash", gd_json_hex(h->consensus_hash, 32, true),
        "app_hash", gd_json_hex(h->app_hash, 32, true), "last_results_hash",
        gd_json_hex(h->last_results_hash, 32, true), "evidence_hash", gd_json_hex(h->evidence_hash, 32, true),
        "proposer_address", gd_json_hex(h->proposer, 20, true));
    json_t *last_commit = json_pack(
        "{s:o,s:i,s:o,s:o}", "height", gd_cmt_int64(h->has_last_block ? h->height - 1 : 0),
        "round", 0, "block_id", gd_block_id_json(h->last_block_hash, h->has_last_block),
        "signatures", sigs);
    return json_pack("{s:o,s:{s:o,s:{s:o},s:{s:[]},s:o}}", "block_id", gd_block_id_json(hash, true),
                     "block", "header", header, "data", "txs", tx_list, "evidence", "evidence",
                     "last_commit", last_commit);
}

/* Deterministic result bytes for the results hash: code, SHA256(data),
 * gas wanted, gas used. */
static gd_status gd_results_hash(uint8_t out[32], const gd_tx_outcome *outcomes, size_t n) {
    uint8_t (*enc)[52] = calloc(n ? n : 1, sizeof *enc);
    const uint8_t **items = calloc(n ? n : 1, sizeof *items);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    if (!enc || !items || !lens) {
        free(enc);
        free(items);
        free(lens);
        return gd_fail(GD_ERR_NOMEM, "out of memory hashing a block's results");
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = enc[i];
        for (int k = 0; k < 4; k++)
            e[k] = (uint8_t)(outcomes[i].err.code >> (24 - 8 * k));
        gd_sha256(e + 4, outcomes[i].data.data ? outcomes[i].data.data : (const uint8_t *)"",
                  outcomes[i].data.len);
        for (int k = 0; k < 8; k++) {
            e[36 + k] = (uint8_t)(outcomes[i].gas_wanted >> (56 - 8 * k));
            e[44 + k] = (uint8_t)(outcomes[i].gas_used >> (56 - 8 * k));
        }
        items[i] = e;
        lens[i] = 52;
    }
    gd_status s = gd_merkle_root(out, items, lens, n);
    free(enc);
    free(items);
    free(lens);
    return s;
}

/* The producer's CPU time per phase of a block, for the debug log: where
 * a block's time goes decides what to make faster. */
enum { GD_PHASE_START, GD_PHASE_EXECUTED, GD_PHASE_HASHED, GD_PHASE_BUILT, GD_PHASE_PERSISTED,
       GD_PHASE_DONE, GD_PHASES };

static void gd_phase_stamp(struct timespec *phases, int phase) {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &phases[phase]);
}

static double gd_phase_ms(const struct timespec *phases, int from, int to) {
    return (double)(phases[to].tv_sec - phases[from].tv_sec) * 1e3 +
           (double)(phases[to].tv_nsec - phases[from].tv_nsec) / 1e6;
}

gd_status gd_node_produce_block(gd_node *node) {
    struct timespec phases[GD_PHASES];
    gd_phase_stamp(phases, GD_PHASE_START);
    pthread_mutex_lock(&node->lock);
    gd_header h;
    memset(&h, 0, sizeof h);
    h.height = gd_app_height(node->app) + 1;
    gd_time block_t;
    if (gd_block_time(node, h.time, h.height, &block_t) != GD_OK) {
        pthread_mutex_unlock(&node->lock);
        return gd_fail_context(GD_ERR_INVALID, "block %lld's time", (long long)h.height);
    }
    h.has_last_block = node->has_last_block;
    memcpy(h.last_block_hash, node->last_block_hash, 32);
    memcpy(h.last_results_hash, node->last_results_hash, 32);
    gd_app_hash(node->app, h.app_hash);
    memcpy(h.proposer, node->validator.address, 20);
    uint8_t val[40];
    memcpy(val, node->validator.pub, 32);
    for (int i = 0; i < 8; i++)
        val[32 + i] = (uint8_t)((uint64_t)GD_VALIDATOR_POWER >> (56 - 8 * i));
    gd_sha256(h.validators_hash, val, sizeof val);
    gd_sha256(h.consensus_hash, "gonka-localnet/consensus-params/v1", 34);
    gd_status s = gd_merkle_root(h.evidence_hash, NULL, NULL, 0);

    size_t n = node->mempool_n < node->cfg.max_block_txs ? node->mempool_n
                                                          : node->cfg.max_block_txs;
    const uint8_t **tx_hashes = calloc(n ? n : 1, sizeof *tx_hashes);
    size_t *hash_lens = calloc(n ? n : 1, sizeof *hash_lens);
    gd_tx_outcome *outcomes = calloc(n ? n : 1, sizeof *outcomes);
    gd_stored_tx *stored = calloc(n ? n : 1, sizeof *stored);
    if (s == GD_OK && !(tx_hashes && hash_lens && outcomes && stored))
        s = gd_fail(GD_ERR_NOMEM, "out of memory for a block");
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        tx_hashes[i] = node->mempool[i].hash;
        hash_lens[i] = 32;
    }
    if (s == GD_OK)
        s = gd_merkle_root(h.data_hash, tx_hashes, hash_lens, n);
    uint8_t block_hash[32];
    if (s == GD_OK)
        s = gd_header_hash(node, &h, block_hash);

    gd_events block_events = {0};
    uint8_t app_hash[32];
    if (s == GD_OK)
        s = gd_app_begin_block(node->app, h.height, block_hash, &block_events);
    size_t failed = 0;
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        s = gd_app_deliver_tx(node->app, &outcomes[i], node->mempool[i].tx, node->mempool[i].len);
        failed += outcomes[i].err.code != 0;
    }
    if (s == GD_OK)
        s = gd_app_end_block(node->app, &block_events);
    gd_phase_stamp(phases, GD_PHASE_EXECUTED);
    if (s == GD_OK)
        s = gd_app_commit(node->app, app_hash);
    if (s == GD_OK && node->cfg.check_invariants && gd_app_check_invariants(node->app) != GD_OK)
        s = gd_fail_context(GD_ERR_PARSE, "block %lld breaks an invariant", (long long)h.height);
    gd_phase_stamp(phases, GD_PHASE_HASHED);

    json_t *block = NULL, *results = NULL, *tx_results = NULL;
    gd_store_change *changes = NULL;
    size_t n_changes = 0;
    uint8_t results_hash[32];
    if (s == GD_OK)
        s = gd_results_hash(results_hash, outcomes, n);
    if (s == GD_OK) {
        block = gd_block_json(node, &h, block_hash, node->mempool, n);
        tx_results = n ? json_array() : json_null();
        for (size_t i = 0; tx_results && i < n; i++) {
            stored[i].result = gd_cmt_tx_result(&outcomes[i]);
            json_array_append(tx_results, (json_t *)stored[i].result);
            memcpy(stored[i].hash, node->mempool[i].hash, 32);
            stored[i].tx = node->mempool[i].tx;
            stored[i].tx_len = node->mempool[i].len;
        }
        /* gd_results_hash is ours (the next header's last_results_hash),
         * kept beside CometBFT's fields so a restart can rebuild it. */
        results = json_pack("{s:o,s:o,s:o,s:n,s:n,s:o,s:o}", "height", gd_cmt_int64(h.height),
                            "txs_results", tx_results, "finalize_block_events",
                            gd_cmt_events(&block_events), "validator_updates",
                            "consensus_param_updates", "app_hash", gd_json_base64(app_hash, 32),
                            "gd_results_hash", gd_json_hex(results_hash, 32, true));
        if (block == NULL || results == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory building block %lld", (long long)h.height);
    }
    if (s == GD_OK)
        s = gd_store_take_changes(gd_app_store(node->app), &changes, &n_changes);
    gd_phase_stamp(phases, GD_PHASE_BUILT);
    if (s == GD_OK) {
        gd_stored_block sb = {.height = h.height, .block = block, .block_results = results,
                              .txs = stored, .n_txs = n, .changes = changes,
                              .n_changes = n_changes};
        memcpy(sb.hash, block_hash, 32);
        memcpy(sb.app_hash, app_hash, 32);
        snprintf(sb.time, sizeof sb.time, "%s", h.time);
        s = gd_blockstore_commit(node->bs, node->chain_id, &sb);
    }
    gd_phase_stamp(phases, GD_PHASE_PERSISTED);
    if (s == GD_OK) {
        memcpy(node->last_block_hash, block_hash, 32);
        memcpy(node->last_results_hash, results_hash, 32);
        snprintf(node->last_block_time, sizeof node->last_block_time, "%s", h.time);
        node->last_time = block_t;
        node->has_last_block = true;
        if (node->earliest_height == 0)
            node->earliest_height = h.height;
        for (size_t i = 0; i < n; i++) {
            node->mempool_bytes -= node->mempool[i].len;
            free(node->mempool[i].tx);
        }
        if (n > 0) {
            memmove(node->mempool, node->mempool + n,
                    (node->mempool_n - n) * sizeof *node->mempool);
            node->mempool_n -= n;
        }
        gd_mempool_recheck(node);
    }
    size_t pending = node->mempool_n;
    pthread_mutex_unlock(&node->lock);

    gd_store_changes_free(changes, n_changes);
    for (size_t i = 0; stored && i < n; i++)
        json_decref((json_t *)stored[i].result);
    for (size_t i = 0; outcomes && i < n; i++)
        gd_tx_outcome_free(&outcomes[i]);
    gd_events_free(&block_events);
    json_decref(block);
    json_decref(results);
    free(tx_hashes);
    free(hash_lens);
    free(outcomes);
    free(stored);
    if (s != GD_OK)
        return gd_fail_context(s, "block %lld", (long long)h.height);
    gd_phase_stamp(phases, GD_PHASE_DONE);
    GD_LOG_DEBUG("localnet", "block %lld cpu: execute %.1f ms, commit %.1f ms, build json %.1f ms, "
                             "persist %.1f ms, recheck+free %.1f ms", (long long)h.height,
                 gd_phase_ms(phases, GD_PHASE_START, GD_PHASE_EXECUTED),
                 gd_phase_ms(phases, GD_PHASE_EXECUTED, GD_PHASE_HASHED),
                 gd_phase_ms(phases, GD_PHASE_HASHED, GD_PHASE_BUILT),
                 gd_phase_ms(phases, GD_PHASE_BUILT, GD_PHASE_PERSISTED),
                 gd_phase_ms(phases, GD_PHASE_PERSISTED, GD_PHASE_DONE));
    char app_hex[65];
    gd_hex_encode(app_hex, app_hash, 32, true);
    GD_LOG_INFO("localnet", "block %lld: %zu txs (%zu failed) in %.1f ms cpu, %zu pending, app "
                            "hash %.16s", (long long)h.height, n, failed,
                gd_phase_ms(phases, GD_PHASE_START, GD_PHASE_DONE), pending, app_hex);
    return GD_OK;
}

gd_status gd_node_run_blocks(gd_node *node, volatile sig_atomic_t *stop) {
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!*stop) {
        long ms = node->cfg.block_time_ms;
        next.tv_sec += ms / 1000;
        next.tv_nsec += (ms % 1000) * 1000000L;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        /* A chain that fell behind its schedule (the process was stopped,
         * or starved on a busy machine) goes on at its block time from now,
         * as a CometBFT network does, rather than making up the missed
         * blocks in a burst that would pass whole windows in milliseconds. */
        struct timespec woke;
        clock_gettime(CLOCK_MONOTONIC, &woke);
        if (woke.tv_sec > next.tv_sec ||
            (woke.tv_sec == next.tv_sec && woke.tv_nsec > next.tv_nsec))
            next = woke;
        /* Sleep in short steps so a stop request is seen quickly. */
        for (;;) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (*stop || now.tv_sec > next.tv_sec ||
                (now.tv_sec == next.tv_sec && now.tv_nsec >= next.tv_nsec))
                break;
            struct timespec step = {0, 20 * 1000000L};
            nanosleep(&step, NULL);
        }
        if (*stop)
            break;
        GD_TRY(gd_node_produce_block(node));
    }
    return GD_OK;
}

/* --- JSON answers ----------------------------------------------------------------- */

gd_status gd_node_status_json(gd_node *node, json_t **out, const char *rpc_address) {
    pthread_mutex_lock(&node->lock);
    int64_t height = gd_app_height(node->app);
    uint8_t app_hash[32];
    gd_app_hash(node->app, app_hash);
    char earliest_hash[65] = "", earliest_app[65] = "", earliest_time[40] = "";
    json_t *first = NULL, *first_results = NULL;
    if (node->earliest_height > 0 &&
        gd_blockstore_block_json(node->bs, node->earliest_height, &first, &first_results) ==
            GD_OK) {
        snprintf(earliest_hash, sizeof earliest_hash, "%s",
                 json_string_value(json_object_get(json_object_get(first, "block_id"), "hash")));
        snprintf(earliest_app, sizeof earliest_app, "%s",
                 json_string_value(json_object_get(
                     json_object_get(json_object_get(first, "block"), "header"), "app_hash")));
        snprintf(earliest_time, sizeof earliest_time, "%s",
                 json_string_value(json_object_get(
                     json_object_get(json_object_get(first, "block"), "header"), "time")));
    }
    json_decref(first);
    json_decref(first_results);
    json_t *j = json_pack(
        "{s:{s:{s:s,s:s,s:s},s:o,s:s,s:s,s:s,s:s,s:s,s:{s:s,s:s}},"
        "s:{s:o,s:o,s:o,s:s,s:s,s:s,s:o,s:s,s:b},s:{s:o,s:{s:s,s:o},s:s}}",
        "node_info", "protocol_version", "p2p", "8", "block", "11", "app", "0", "id",
        gd_json_hex(node->validator.address, 20, true), "listen_addr", "none (single-node localnet)",
        "network", node->chain_id, "version", "0.38.17", "channels", "", "moniker",
        "gonka-localnet", "other", "tx_index", "on", "rpc_address", rpc_address ? rpc_address : "",
        "sync_info", "latest_block_hash",
        node->has_last_block ? gd_json_hex(node->last_block_hash, 32, true) : json_string(""),
        "latest_app_hash", gd_json_hex(app_hash, 32, true), "latest_block_height", gd_cmt_int64(height),
        "latest_block_time", node->last_block_time, "earliest_block_hash", earliest_hash,
        "earliest_app_hash", earliest_app, "earliest_block_height",
        gd_cmt_int64(node->earliest_height), "earliest_block_time", earliest_time, "catching_up", 0,
        "validator_info", "address", gd_json_hex(node->validator.address, 20, true), "pub_key", "type",
        "tendermint/PubKeyEd25519", "value", gd_json_base64(node->validator.pub, 32),
        "voting_power", "10");
    pthread_mutex_unlock(&node->lock);
    *out = j;
    return j ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

gd_status gd_node_abci_info_json(gd_node *node, json_t **out) {
    pthread_mutex_lock(&node->lock);
    uint8_t app_hash[32];
    gd_app_hash(node->app, app_hash);
    *out = json_pack("{s:{s:s,s:s,s:o,s:o}}", "response", "data", "gonka-localnet", "version",
                     GD_VERSION, "last_block_height", gd_cmt_int64(gd_app_height(node->app)),
                     "last_block_app_hash", gd_json_base64(app_hash, 32));
    pthread_mutex_unlock(&node->lock);
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

gd_status gd_node_abci_query_json(gd_node *node, json_t **out, const char *path,
                                  const uint8_t *data, size_t len, int64_t height) {
    gd_buf resp = {0};
    gd_abci_error err;
    pthread_mutex_lock(&node->lock);
    int64_t latest = gd_app_height(node->app);
    gd_status s = GD_OK;
    if (height != 0 && height != latest) {
        memset(&err, 0, sizeof err);
        err.code = 26;
        snprintf(err.codespace, sizeof err.codespace, "sdk");
        snprintf(err.log, sizeof err.log,
                 "failed to load state at height %lld; only the latest height (%lld) is kept by "
                 "gonka-localnet: invalid height", (long long)height, (long long)latest);
    } else {
        s = gd_app_query(node->app, path, data, len, &resp, &err);
    }
    pthread_mutex_unlock(&node->lock);
    if (s != GD_OK) {
        gd_buf_free(&resp);
        return s;
    }
    json_t *r = json_object();
    if (r && err.code != 0) {
        json_object_set_new(r, "code", json_integer(err.code));
        json_object_set_new(r, "log", json_string(err.log));
        json_object_set_new(r, "codespace", json_string(err.codespace));
    }
    if (r && resp.len > 0)
        json_object_set_new(r, "value", gd_json_base64(resp.data, resp.len));
    if (r)
        json_object_set_new(r, "height", gd_cmt_int64(latest));
    gd_buf_free(&resp);
    *out = r ? json_pack("{s:o}", "response", r) : NULL;
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

static gd_status gd_node_stored_block(gd_node *node, json_t **out, int64_t height, bool results) {
    pthread_mutex_lock(&node->lock);
    int64_t latest = gd_app_height(node->app);
    if (height == 0)
        height = latest;
    gd_status s;
    if (height < 1 || height > latest)
        s = gd_fail(GD_ERR_INVALID, "height %lld must be less than or equal to the current "
                                    "blockchain height %lld", (long long)height, (long long)latest);
    else if (results)
        s = gd_blockstore_block_json(node->bs, height, NULL, out);
    else
        s = gd_blockstore_block_json(node->bs, height, out, NULL);
    pthread_mutex_unlock(&node->lock);
    if (s == GD_OK && results)
        json_object_del(*out, "gd_results_hash");
    return s;
}

gd_status gd_node_block_json(gd_node *node, json_t **out, int64_t height) {
    return gd_node_stored_block(node, out, height, false);
}

gd_status gd_node_block_results_json(gd_node *node, json_t **out, int64_t height) {
    return gd_node_stored_block(node, out, height, true);
}

gd_status gd_node_tx_json(gd_node *node, json_t **out, const uint8_t *hash, size_t len) {
    if (len != 32)
        return gd_fail(GD_ERR_INVALID, "tx hash must be 32 bytes, got %zu", len);
    pthread_mutex_lock(&node->lock);
    gd_status s = gd_blockstore_tx_json(node->bs, out, hash);
    pthread_mutex_unlock(&node->lock);
    return s;
}

gd_status gd_node_tx_search_json(gd_node *node, json_t **out, const char *query, bool desc,
                                 int64_t page, int64_t per_page) {
    if (page < 1)
        page = 1;
    if (per_page < 1)
        per_page = 30;
    if (per_page > 100)
        per_page = 100;
    pthread_mutex_lock(&node->lock);
    gd_status s = gd_blockstore_tx_search(node->bs, out, query, desc, page, per_page);
    pthread_mutex_unlock(&node->lock);
    return s;
}

gd_status gd_node_genesis_json(gd_node *node, json_t **out) {
    *out = json_pack("{s:O}", "genesis", node->genesis);
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

gd_status gd_node_unconfirmed_json(gd_node *node, json_t **out) {
    pthread_mutex_lock(&node->lock);
    *out = json_pack("{s:o,s:o,s:o,s:n}", "n_txs", gd_cmt_int64((int64_t)node->mempool_n),
                     "total", gd_cmt_int64((int64_t)node->mempool_n), "total_bytes",
                     gd_cmt_int64((int64_t)node->mempool_bytes), "txs");
    pthread_mutex_unlock(&node->lock);
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

gd_status gd_node_export(gd_node *node, json_t **genesis) {
    pthread_mutex_lock(&node->lock);
    json_t *state = gd_app_export(node->app);
    int64_t height = gd_app_height(node->app);
    pthread_mutex_unlock(&node->lock);
    if (state == NULL)
        return gd_fail_context(GD_ERR_PARSE, "exporting state");
    json_t *time = json_object_get(node->genesis, "genesis_time");
    *genesis = json_pack("{s:O?,s:s,s:o,s:s,s:o}", "genesis_time", time, "chain_id",
                         node->chain_id, "initial_height", gd_cmt_int64(height + 1), "app_hash", "",
                         "app_state", state);
    return *genesis ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

gd_status gd_node_check_invariants(gd_node *node) {
    pthread_mutex_lock(&node->lock);
    gd_status s = gd_app_check_invariants(node->app);
    pthread_mutex_unlock(&node->lock);
    return s;
}
