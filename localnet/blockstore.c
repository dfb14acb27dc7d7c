/* SQLite persistence of the localnet chain (see blockstore.h). */
#include "localnet/blockstore.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base64.h"
#include "common/bytes.h"

struct gd_blockstore {
    sqlite3 *db;
};

static const char *const gd_schema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    /* 64 MiB of page cache: a block's index inserts touch pages all over the
     * event index, and re-reading them from the file costs more than the
     * inserts themselves. */
    "PRAGMA cache_size=-65536;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS state (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS blocks (height INTEGER PRIMARY KEY, hash BLOB NOT NULL,"
    "  time TEXT NOT NULL, app_hash BLOB NOT NULL, block_json TEXT NOT NULL,"
    "  results_json TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS txs (hash BLOB PRIMARY KEY, height INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL, tx BLOB NOT NULL, result_json TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS txs_height ON txs(height, idx);"
    /* One b-tree keyed the way tx_search looks rows up: no rowid table
     * beside an index, half the writes per indexed attribute. */
    "CREATE TABLE IF NOT EXISTS tx_events (attr TEXT NOT NULL, value TEXT NOT NULL,"
    "  height INTEGER NOT NULL, idx INTEGER NOT NULL,"
    "  PRIMARY KEY (attr, value, height, idx)) WITHOUT ROWID;";

static gd_status gd_step_done(gd_blockstore *bs, sqlite3_stmt *st, const char *what);

static gd_status gd_sql_fail(gd_blockstore *bs, const char *what) {
    return gd_fail(GD_ERR_IO, "database: %s: %s", what, sqlite3_errmsg(bs->db));
}

/* What to do about a store that cannot be used, said with each refusal:
 * path's directory is the home's data/. */
static gd_status gd_store_refuse(const char *path, const char *why) {
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) : 1;
    return gd_fail(GD_ERR_PARSE, "%s %s: restore it from a backup, or remove %.*s to start the "
                   "chain over from genesis.json (its blocks are then lost)", path, why, dir_len,
                   slash ? path : ".");
}

/* SQLite's answer for a file that is not, or no longer, a sound database. */
static bool gd_sql_damaged(int rc) {
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* PRAGMA quick_check: every page and b-tree is read and checked for
 * structure (the check that catches torn or overwritten pages), without
 * integrity_check's cross-check of every index entry against its table
 * row, which costs O(N log N) and would make each start slow on a long
 * chain; quick_check is one pass over the file. */
static gd_status gd_store_check(gd_blockstore *bs, const char *path) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(bs->db, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    char why[300];
    gd_status s = GD_OK;
    if (rc == SQLITE_ROW) {
        const char *said = (const char *)sqlite3_column_text(st, 0);
        if (said == NULL || strcmp(said, "ok") != 0) {
            snprintf(why, sizeof why, "is damaged (SQLite quick_check: %.200s)",
                     said ? said : "no answer");
            /* Its report runs over lines; the refusal is one. */
            for (char *c = why; *c; c++)
                if (*c == '\n')
                    *c = ' ';
            s = gd_store_refuse(path, why);
        }
    } else if (gd_sql_damaged(rc)) {
        snprintf(why, sizeof why, "is damaged (SQLite: %.200s)", sqlite3_errmsg(bs->db));
        s = gd_store_refuse(path, why);
    } else {
        s = gd_fail(GD_ERR_IO, "database %s: checking it: %s", path, sqlite3_errmsg(bs->db));
    }
    sqlite3_finalize(st);
    return s;
}

gd_status gd_blockstore_open(gd_blockstore **out, const char *path) {
    /* SQLite takes an empty file for a new database: a chain.db truncated
     * to nothing would silently start the chain over. A new store is
     * never left empty (the schema below writes its first page). */
    struct stat fst;
    if (stat(path, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_size == 0)
        return gd_store_refuse(path, "is empty (0 bytes), not a chain database");
    /* A FIFO or a device would be opened and then fail as "disk I/O error",
     * or wait on a writer. */
    if (stat(path, &fst) == 0 && !S_ISREG(fst.st_mode))
        return gd_store_refuse(path, "is not a regular file, not a chain database");
    gd_blockstore *bs = calloc(1, sizeof *bs);
    if (bs == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    int rc = sqlite3_open_v2(path, &bs->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                             NULL);
    gd_status s = GD_OK;
    char *err = NULL;
    if (rc != SQLITE_OK) {
        s = gd_fail(GD_ERR_IO, "cannot open database %s: %s", path,
                    bs->db ? sqlite3_errmsg(bs->db) : "out of memory");
    } else {
        sqlite3_busy_timeout(bs->db, 5000);
        s = gd_store_check(bs, path);
    }
    if (s == GD_OK && (rc = sqlite3_exec(bs->db, gd_schema, NULL, NULL, &err)) != SQLITE_OK) {
        char why[300];
        snprintf(why, sizeof why, "is damaged (SQLite: %.200s)", err ? err : "schema failed");
        s = gd_sql_damaged(rc) ? gd_store_refuse(path, why)
                               : gd_fail(GD_ERR_IO, "database %s: %s", path,
                                         err ? err : "schema failed");
    }
    sqlite3_free(err);
    if (s != GD_OK) {
        gd_blockstore_close(bs);
        return s;
    }
    *out = bs;
    return GD_OK;
}

void gd_blockstore_close(gd_blockstore *bs) {
    if (bs == NULL)
        return;
    sqlite3_close(bs->db);
    free(bs);
}

static gd_status gd_meta_get(gd_blockstore *bs, const char *key, const void **value, int *len,
                             sqlite3_stmt **stmt) {
    if (sqlite3_prepare_v2(bs->db, "SELECT value FROM meta WHERE key=?", -1, stmt, NULL) !=
        SQLITE_OK)
        return gd_sql_fail(bs, "reading meta");
    sqlite3_bind_text(*stmt, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(*stmt);
    if (rc == SQLITE_DONE)
        return GD_ERR_NOT_FOUND;
    if (rc != SQLITE_ROW) /* never a damaged store taken for a new one */
        return gd_sql_fail(bs, "reading meta");
    *value = sqlite3_column_blob(*stmt, 0);
    *len = sqlite3_column_bytes(*stmt, 0);
    return GD_OK;
}

gd_status gd_blockstore_head(gd_blockstore *bs, int64_t *height, uint8_t app_hash[32],
                             char *chain_id, size_t chain_id_cap) {
    sqlite3_stmt *st = NULL;
    const void *v = NULL; /* set whenever gd_meta_get succeeds; gcc -O3 cannot see it */
    int len = 0;
    *height = 0;
    gd_status s = gd_meta_get(bs, "height", &v, &len, &st);
    if (s == GD_OK) {
        char text[24];
        if (len <= 0 || len >= (int)sizeof text) {
            s = gd_fail(GD_ERR_PARSE, "database: malformed height");
        } else {
            memcpy(text, v, (size_t)len);
            text[len] = '\0';
            *height = strtoll(text, NULL, 10);
        }
    }
    sqlite3_finalize(st);
    if (s != GD_OK)
        return s;
    st = NULL;
    s = gd_meta_get(bs, "app_hash", &v, &len, &st);
    if (s == GD_OK && len == 32)
        memcpy(app_hash, v, 32);
    else if (s == GD_OK)
        s = gd_fail(GD_ERR_PARSE, "database: malformed app hash");
    sqlite3_finalize(st);
    if (s != GD_OK)
        return s;
    st = NULL;
    s = gd_meta_get(bs, "chain_id", &v, &len, &st);
    if (s == GD_OK && len > 0 && (size_t)len < chain_id_cap) {
        memcpy(chain_id, v, (size_t)len);
        chain_id[len] = '\0';
    } else if (s == GD_OK) {
        s = gd_fail(GD_ERR_PARSE, "database: malformed chain id");
    }
    sqlite3_finalize(st);
    return s;
}

gd_status gd_blockstore_genesis_hash(gd_blockstore *bs, uint8_t hash[32]) {
    sqlite3_stmt *st = NULL;
    const void *v = NULL;
    int len = 0;
    gd_status s = gd_meta_get(bs, "genesis_sha256", &v, &len, &st);
    if (s == GD_OK && len == 32)
        memcpy(hash, v, 32);
    else if (s == GD_OK)
        s = gd_fail(GD_ERR_PARSE, "database: malformed genesis hash");
    sqlite3_finalize(st);
    return s;
}

gd_status gd_blockstore_set_genesis_hash(gd_blockstore *bs, const uint8_t hash[32]) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(bs->db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1,
                           &st, NULL) != SQLITE_OK)
        return gd_sql_fail(bs, "recording the genesis hash");
    sqlite3_bind_text(st, 1, "genesis_sha256", -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, hash, 32, SQLITE_STATIC);
    gd_status s = gd_step_done(bs, st, "recording the genesis hash");
    sqlite3_finalize(st);
    return s;
}

int64_t gd_blockstore_earliest(gd_blockstore *bs) {
    sqlite3_stmt *st = NULL;
    int64_t h = 0;
    if (sqlite3_prepare_v2(bs->db, "SELECT MIN(height) FROM blocks", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        h = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return h;
}

gd_status gd_blockstore_load_state(gd_blockstore *bs, gd_store *store) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(bs->db, "SELECT key, value FROM state ORDER BY key", -1, &st, NULL) !=
        SQLITE_OK)
        return gd_sql_fail(bs, "reading state");
    gd_status s = GD_OK;
    int rc;
    while (s == GD_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const uint8_t *k = sqlite3_column_blob(st, 0);
        int kl = sqlite3_column_bytes(st, 0);
        const uint8_t *v = sqlite3_column_blob(st, 1);
        int vl = sqlite3_column_bytes(st, 1);
        s = gd_store_load(store, k, (size_t)kl, v ? v : (const uint8_t *)"", (size_t)vl);
    }
    if (s == GD_OK && rc != SQLITE_DONE)
        s = gd_sql_fail(bs, "reading state");
    sqlite3_finalize(st);
    return s;
}

/* Runs one prepared statement to completion. */
static gd_status gd_step_done(gd_blockstore *bs, sqlite3_stmt *st, const char *what) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? GD_OK : gd_sql_fail(bs, what);
}

/* Indexes a transaction's events "type.key" = value, as CometBFT's kv
 * indexer does for attributes marked index. */
static gd_status gd_index_events(gd_blockstore *bs, sqlite3_stmt *ins, const json_t *result,
                                 int64_t height, size_t idx) {
    const json_t *events = json_object_get(result, "events");
    size_t i, k;
    const json_t *ev, *attr;
    json_array_foreach(events, i, ev) {
        const char *type = json_string_value(json_object_get(ev, "type"));
        json_array_foreach(json_object_get(ev, "attributes"), k, attr) {
            const char *key = json_string_value(json_object_get(attr, "key"));
            const char *value = json_string_value(json_object_get(attr, "value"));
            if (!type || !key || !value || !json_is_true(json_object_get(attr, "index")))
                continue;
            char name[256];
            snprintf(name, sizeof name, "%s.%s", type, key);
            sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(ins, 2, value, -1, SQLITE_STATIC);
            sqlite3_bind_int64(ins, 3, height);
            sqlite3_bind_int64(ins, 4, (int64_t)idx);
            GD_TRY(gd_step_done(bs, ins, "indexing events"));
        }
    }
    return GD_OK;
}

static gd_status gd_commit_body(gd_blockstore *bs, const char *chain_id,
                                const gd_stored_block *b) {
    sqlite3_stmt *st = NULL, *del = NULL, *ins_tx = NULL, *ins_ev = NULL, *meta = NULL;
    gd_status s = GD_OK;
    char *block_text = json_dumps(b->block, JSON_COMPACT);
    /* The block's tx results live in the txs table; the block row keeps a
     * null in their place (saving a second copy of every result). */
    json_t *results = json_copy((json_t *)b->block_results);
    if (results && json_object_get(results, "txs_results"))
        json_object_set_new(results, "txs_results", json_null());
    char *results_text = results ? json_dumps(results, JSON_COMPACT) : NULL;
    json_decref(results);
    if (!block_text || !results_text) {
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (sqlite3_prepare_v2(bs->db, "INSERT OR REPLACE INTO state(key, value) VALUES(?, ?)", -1,
                           &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bs->db, "DELETE FROM state WHERE key=?", -1, &del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bs->db,
                           "INSERT OR REPLACE INTO txs(hash, height, idx, tx, result_json) "
                           "VALUES(?, ?, ?, ?, ?)", -1, &ins_tx, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bs->db,
                           "INSERT OR IGNORE INTO tx_events(attr, value, height, idx) "
                           "VALUES(?, ?, ?, ?)",
                           -1, &ins_ev, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bs->db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1,
                           &meta, NULL) != SQLITE_OK) {
        s = gd_sql_fail(bs, "preparing the block write");
        goto done;
    }
    for (size_t i = 0; s == GD_OK && i < b->n_changes; i++) {
        const gd_store_change *c = &b->changes[i];
        if (c->deleted) {
            sqlite3_bind_blob(del, 1, c->key, (int)c->key_len, SQLITE_STATIC);
            s = gd_step_done(bs, del, "deleting state");
        } else {
            sqlite3_bind_blob(st, 1, c->key, (int)c->key_len, SQLITE_STATIC);
            sqlite3_bind_blob(st, 2, c->value_len ? c->value : (const uint8_t *)"",
                              (int)c->value_len, SQLITE_STATIC);
            s = gd_step_done(bs, st, "writing state");
        }
    }
    for (size_t i = 0; s == GD_OK && i < b->n_txs; i++) {
        const gd_stored_tx *t = &b->txs[i];
        char *result = json_dumps(t->result, JSON_COMPACT);
        if (result == NULL) {
            s = gd_fail(GD_ERR_NOMEM, "out of memory");
            break;
        }
        sqlite3_bind_blob(ins_tx, 1, t->hash, 32, SQLITE_STATIC);
        sqlite3_bind_int64(ins_tx, 2, b->height);
        sqlite3_bind_int64(ins_tx, 3, (int64_t)i);
        sqlite3_bind_blob(ins_tx, 4, t->tx, (int)t->tx_len, SQLITE_STATIC);
        sqlite3_bind_text(ins_tx, 5, result, -1, SQLITE_STATIC);
        s = gd_step_done(bs, ins_tx, "writing a transaction");
        free(result);
        if (s == GD_OK)
            s = gd_index_events(bs, ins_ev, t->result, b->height, i);
    }
    if (s == GD_OK) {
        sqlite3_finalize(st);
        st = NULL;
        if (sqlite3_prepare_v2(bs->db,
                               "INSERT INTO blocks(height, hash, time, app_hash, block_json, "
                               "results_json) VALUES(?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
            s = gd_sql_fail(bs, "preparing the block row");
    }
    if (s == GD_OK) {
        sqlite3_bind_int64(st, 1, b->height);
        sqlite3_bind_blob(st, 2, b->hash, 32, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, b->time, -1, SQLITE_STATIC);
        sqlite3_bind_blob(st, 4, b->app_hash, 32, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, block_text, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, results_text, -1, SQLITE_STATIC);
        s = gd_step_done(bs, st, "writing the block");
    }
    char height[24];
    snprintf(height, sizeof height, "%lld", (long long)b->height);
    const struct {
        const char *key;
        const void *value;
        int len;
    } metas[] = {{"height", height, (int)strlen(height)},
                 {"app_hash", b->app_hash, 32},
                 {"chain_id", chain_id, (int)strlen(chain_id)}};
    for (size_t i = 0; s == GD_OK && i < sizeof metas / sizeof metas[0]; i++) {
        sqlite3_bind_text(meta, 1, metas[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_blob(meta, 2, metas[i].value, metas[i].len, SQLITE_STATIC);
        s = gd_step_done(bs, meta, "writing the head");
    }
done:
    sqlite3_finalize(st);
    sqlite3_finalize(del);
    sqlite3_finalize(ins_tx);
    sqlite3_finalize(ins_ev);
    sqlite3_finalize(meta);
    free(block_text);
    free(results_text);
    return s;
}

gd_status gd_blockstore_commit(gd_blockstore *bs, const char *chain_id,
                               const gd_stored_block *block) {
    if (sqlite3_exec(bs->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return gd_sql_fail(bs, "beginning the block write");
    gd_status s = gd_commit_body(bs, chain_id, block);
    if (s != GD_OK) {
        sqlite3_exec(bs->db, "ROLLBACK", NULL, NULL, NULL);
        return s;
    }
    if (sqlite3_exec(bs->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        s = gd_sql_fail(bs, "committing the block");
        sqlite3_exec(bs->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return s;
}

/* Puts the height's tx results, in block order, back into the stored
 * /block_results answer (null when the block has none, as CometBFT). */
static gd_status gd_fill_tx_results(gd_blockstore *bs, int64_t height, json_t *results) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(bs->db, "SELECT result_json FROM txs WHERE height=? ORDER BY idx",
                           -1, &st, NULL) != SQLITE_OK)
        return gd_sql_fail(bs, "reading a block's results");
    sqlite3_bind_int64(st, 1, height);
    json_t *list = NULL;
    gd_status s = GD_OK;
    int rc;
    while (s == GD_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *r = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        if (list == NULL)
            list = json_array();
        if (r == NULL || list == NULL || json_array_append_new(list, r) != 0)
            s = gd_fail(GD_ERR_PARSE, "database: results of block %lld are damaged",
                        (long long)height);
    }
    if (s == GD_OK && rc != SQLITE_DONE)
        s = gd_sql_fail(bs, "reading a block's results");
    sqlite3_finalize(st);
    if (s == GD_OK && list && json_object_set(results, "txs_results", list) != 0)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    json_decref(list);
    return s;
}

gd_status gd_blockstore_block_json(gd_blockstore *bs, int64_t height, json_t **block,
                                   json_t **results) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(bs->db, "SELECT block_json, results_json FROM blocks WHERE height=?",
                           -1, &st, NULL) != SQLITE_OK)
        return gd_sql_fail(bs, "reading a block");
    sqlite3_bind_int64(st, 1, height);
    gd_status s = GD_OK;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        s = gd_fail(GD_ERR_NOT_FOUND, "height %lld is not available", (long long)height);
    } else if (rc != SQLITE_ROW) {
        s = gd_sql_fail(bs, "reading a block");
    } else {
        if (block)
            *block = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        if (results)
            *results = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
        if ((block && !*block) || (results && !*results))
            s = gd_fail(GD_ERR_PARSE, "database: block %lld is damaged", (long long)height);
    }
    sqlite3_finalize(st);
    if (s == GD_OK && results)
        s = gd_fill_tx_results(bs, height, *results);
    if (s != GD_OK) {
        if (block) {
            json_decref(*block);
            *block = NULL;
        }
        if (results) {
            json_decref(*results);
            *results = NULL;
        }
    }
    return s;
}

/* Builds /tx's ResultTx from a txs row (hash, height, idx, tx, result_json). */
static json_t *gd_tx_row_json(sqlite3_stmt *st) {
    const uint8_t *hash = sqlite3_column_blob(st, 0);
    char hex[65] = "";
    if (hash && sqlite3_column_bytes(st, 0) == 32)
        gd_hex_encode(hex, hash, 32, true);
    int tx_len = sqlite3_column_bytes(st, 3);
    const uint8_t *tx = sqlite3_column_blob(st, 3);
    char *b64 = malloc(gd_base64_encoded_len((size_t)tx_len) + 1);
    if (b64 == NULL)
        return NULL;
    gd_base64_encode(b64, tx ? tx : (const uint8_t *)"", (size_t)tx_len);
    char height[24];
    snprintf(height, sizeof height, "%lld", (long long)sqlite3_column_int64(st, 1));
    json_t *result = json_loads((const char *)sqlite3_column_text(st, 4), 0, NULL);
    json_t *j = result ? json_pack("{s:s,s:s,s:I,s:o,s:s}", "hash", hex, "height", height,
                                   "index", (json_int_t)sqlite3_column_int64(st, 2), "tx_result",
                                   result, "tx", b64)
                       : NULL;
    free(b64);
    return j;
}

gd_status gd_blockstore_tx_json(gd_blockstore *bs, json_t **out, const uint8_t hash[32]) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(bs->db,
                           "SELECT hash, height, idx, tx, result_json FROM txs WHERE hash=?", -1,
                           &st, NULL) != SQLITE_OK)
        return gd_sql_fail(bs, "reading a transaction");
    sqlite3_bind_blob(st, 1, hash, 32, SQLITE_STATIC);
    gd_status s = GD_OK;
    if (sqlite3_step(st) != SQLITE_ROW) {
        char hex[65];
        gd_hex_encode(hex, hash, 32, true);
        s = gd_fail(GD_ERR_NOT_FOUND, "tx (%s) not found", hex);
    } else if ((*out = gd_tx_row_json(st)) == NULL) {
        s = gd_fail(GD_ERR_PARSE, "database: transaction is damaged");
    }
    sqlite3_finalize(st);
    return s;
}

/* --- tx_search ---------------------------------------------------------------- */

typedef struct gd_condition {
    char key[128];
    char op[3];
    char value[256];
    bool quoted;
} gd_condition;

/* Parses "key op value" conditions joined by " AND ". */
static gd_status gd_parse_query(const char *query, gd_condition *conds, size_t cap, size_t *n) {
    const char *p = query;
    *n = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*n == cap)
            return gd_fail(GD_ERR_INVALID, "too many conditions in query");
        gd_condition *c = &conds[(*n)++];
        size_t k = 0;
        while (*p && strchr("=<> ", *p) == NULL && k + 1 < sizeof c->key)
            c->key[k++] = *p++;
        c->key[k] = '\0';
        while (*p == ' ')
            p++;
        size_t o = 0;
        while (*p && strchr("=<>", *p) && o < 2)
            c->op[o++] = *p++;
        c->op[o] = '\0';
        while (*p == ' ')
            p++;
        if (k == 0 || o == 0 || (strcmp(c->op, "=") && strcmp(c->op, "<") && strcmp(c->op, ">") &&
                                 strcmp(c->op, "<=") && strcmp(c->op, ">=")))
            return gd_fail(GD_ERR_INVALID, "failed to parse query: expected key=value near "
                                           "'%.40s'", query);
        size_t v = 0;
        c->quoted = *p == '\'';
        if (c->quoted) {
            p++;
            while (*p && *p != '\'' && v + 1 < sizeof c->value)
                c->value[v++] = *p++;
            if (*p != '\'')
                return gd_fail(GD_ERR_INVALID, "failed to parse query: unterminated string");
            p++;
        } else {
            while (*p && *p != ' ' && v + 1 < sizeof c->value)
                c->value[v++] = *p++;
        }
        c->value[v] = '\0';
        while (*p == ' ')
            p++;
        if (*p == '\0')
            return GD_OK;
        if (strncmp(p, "AND ", 4) != 0)
            return gd_fail(GD_ERR_INVALID, "failed to parse query: only AND is supported, near "
                                           "'%.40s'", p);
        p += 4;
    }
}

gd_status gd_blockstore_tx_search(gd_blockstore *bs, json_t **out, const char *query,
                                  bool desc, int64_t page, int64_t per_page) {
    gd_condition conds[8];
    size_t n = 0;
    GD_TRY(gd_parse_query(query, conds, 8, &n));
    char where[2048] = "1";
    for (size_t i = 0; i < n; i++) {
        const gd_condition *c = &conds[i];
        char clause[256];
        if (strcmp(c->key, "tx.height") == 0) {
            snprintf(clause, sizeof clause, " AND height %s ?", c->op);
        } else if (strcmp(c->key, "tx.hash") == 0) {
            if (strcmp(c->op, "=") != 0)
                return gd_fail(GD_ERR_INVALID, "tx.hash supports only =");
            snprintf(clause, sizeof clause, " AND hash = ?");
        } else {
            if (strcmp(c->op, "=") != 0)
                return gd_fail(GD_ERR_INVALID, "event attributes support only =");
            snprintf(clause, sizeof clause,
                     " AND EXISTS (SELECT 1 FROM tx_events e WHERE e.attr=? AND e.value=? AND "
                     "e.height=txs.height AND e.idx=txs.idx)");
        }
        strncat(where, clause, sizeof where - strlen(where) - 1);
    }
    char sql[2600];
    snprintf(sql, sizeof sql,
             "SELECT hash, height, idx, tx, result_json FROM txs WHERE %s ORDER BY height %s, "
             "idx %s", where, desc ? "DESC" : "ASC", desc ? "DESC" : "ASC");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(bs->db, sql, -1, &st, NULL) != SQLITE_OK)
        return gd_sql_fail(bs, "searching transactions");
    int bind = 1;
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        const gd_condition *c = &conds[i];
        if (strcmp(c->key, "tx.height") == 0) {
            char *end = NULL;
            long long h = strtoll(c->value, &end, 10);
            if (end == c->value || *end != '\0')
                s = gd_fail(GD_ERR_INVALID, "tx.height wants a number");
            sqlite3_bind_int64(st, bind++, h);
        } else if (strcmp(c->key, "tx.hash") == 0) {
            uint8_t hash[32];
            size_t hl = 0;
            if (gd_hex_decode(hash, 32, &hl, c->value, strlen(c->value)) != GD_OK || hl != 32)
                s = gd_fail(GD_ERR_INVALID, "tx.hash wants 64 hex digits");
            sqlite3_bind_blob(st, bind++, hash, 32, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_text(st, bind++, c->key, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, bind++, c->value, -1, SQLITE_STATIC);
        }
    }
    json_t *txs = json_array();
    int64_t total = 0, first = (page - 1) * per_page;
    while (s == GD_OK && txs && sqlite3_step(st) == SQLITE_ROW) {
        if (total >= first && total < first + per_page) {
            json_t *j = gd_tx_row_json(st);
            if (j == NULL)
                s = gd_fail(GD_ERR_PARSE, "database: transaction is damaged");
            else
                json_array_append_new(txs, j);
        }
        total++;
    }
    sqlite3_finalize(st);
    if (s == GD_OK && txs == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK && total > 0 && first >= total)
        s = gd_fail(GD_ERR_INVALID, "page should be within [1, %lld] range, given %lld",
                    (long long)((total + per_page - 1) / per_page), (long long)page);
    if (s != GD_OK) {
        json_decref(txs);
        return s;
    }
    char count[24];
    snprintf(count, sizeof count, "%lld", (long long)total);
    *out = json_pack("{s:o,s:s}", "txs", txs, "total_count", count);
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}
