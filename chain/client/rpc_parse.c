/* Parsing of CometBFT JSON-RPC answers. Every field read is type-checked;
 * int64 values arrive as JSON strings (cmtjson), int32 ones as numbers, and
 * fields equal to their zero value are omitted. */
#include <stdio.h>
#include <string.h>

#include "chain/client/rpc_parse.h"
#include "common/base64.h"
#include "common/parse.h"

/* Looks up a dotted path of object members ("sync_info.latest_block_height"). */
static const json_t *gd_json_path(const json_t *root, const char *path) {
    char key[64];
    const json_t *cur = root;
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key || !json_is_object(cur))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        path += n + (dot ? 1 : 0);
    }
    return cur;
}

/* Reads an int64 given as a decimal string (or, leniently, a JSON integer).
 * Missing means zero when optional. */
static gd_status gd_json_i64(int64_t *out, const json_t *root, const char *path, int optional) {
    const json_t *v = gd_json_path(root, path);
    if (v == NULL || json_is_null(v)) {
        if (optional) {
            *out = 0;
            return GD_OK;
        }
        return gd_fail(GD_ERR_PARSE, "node answer lacks '%s'", path);
    }
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return GD_OK;
    }
    if (json_is_string(v) && gd_parse_i64(out, json_string_value(v)) == GD_OK)
        return GD_OK;
    return gd_fail(GD_ERR_PARSE, "node answer '%s' is not an integer", path);
}

static gd_status gd_json_u32(uint32_t *out, const json_t *root, const char *path) {
    int64_t v;
    GD_TRY(gd_json_i64(&v, root, path, 1));
    if (v < 0 || v > UINT32_MAX)
        return gd_fail(GD_ERR_PARSE, "node answer '%s' is out of range", path);
    *out = (uint32_t)v;
    return GD_OK;
}

/* Copies a string field. Missing is "" when optional. Too long: truncated
 * with "..." when truncate, else an error (for fields that must be exact). */
static gd_status gd_rpc_json_text(char *out, size_t cap, const json_t *root, const char *path,
                             int optional, int truncate) {
    const json_t *v = gd_json_path(root, path);
    out[0] = '\0';
    if (v == NULL || json_is_null(v)) {
        if (optional)
            return GD_OK;
        return gd_fail(GD_ERR_PARSE, "node answer lacks '%s'", path);
    }
    if (!json_is_string(v))
        return gd_fail(GD_ERR_PARSE, "node answer '%s' is not a string", path);
    size_t len = json_string_length(v);
    const char *s = json_string_value(v);
    if (len < cap) {
        memcpy(out, s, len);
        out[len] = '\0';
        /* Embedded NULs would silently shorten the text: refuse them. */
        if (strlen(out) != len)
            return gd_fail(GD_ERR_PARSE, "node answer '%s' contains a NUL", path);
        return GD_OK;
    }
    if (!truncate)
        return gd_fail(GD_ERR_PARSE, "node answer '%s' is too long (%zu bytes)", path, len);
    snprintf(out, cap, "%.*s...", (int)(cap - 4), s);
    return GD_OK;
}

static gd_status gd_json_bool(bool *out, const json_t *root, const char *path) {
    const json_t *v = gd_json_path(root, path);
    if (v == NULL || json_is_null(v)) {
        *out = false;
        return GD_OK;
    }
    if (!json_is_boolean(v))
        return gd_fail(GD_ERR_PARSE, "node answer '%s' is not a boolean", path);
    *out = json_is_true(v);
    return GD_OK;
}

/* An upper- or lower-case hex digest of 32 bytes (64 digits), or empty. */
static gd_status gd_json_hash(char out[65], const json_t *root, const char *path, int optional) {
    GD_TRY(gd_rpc_json_text(out, 65, root, path, optional, 0));
    size_t n = strlen(out);
    if (n == 0 && optional)
        return GD_OK;
    if (n != 64 && !(optional && n == 0))
        return gd_fail(GD_ERR_PARSE, "node answer '%s' is not a 64-digit hash", path);
    for (size_t i = 0; i < n; i++) {
        char c = out[i];
        if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f')))
            return gd_fail(GD_ERR_PARSE, "node answer '%s' is not hex", path);
        if (c >= 'a')
            out[i] = (char)(c - 'a' + 'A');
    }
    return GD_OK;
}

static gd_status gd_json_abci_code(gd_abci_code *out, const json_t *obj) {
    GD_TRY(gd_json_u32(&out->code, obj, "code"));
    GD_TRY(gd_rpc_json_text(out->codespace, sizeof out->codespace, obj, "codespace", 1, 1));
    GD_TRY(gd_rpc_json_text(out->log, sizeof out->log, obj, "log", 1, 1));
    return GD_OK;
}

gd_status gd_rpc_parse_envelope(const char *body, size_t len, json_t **result,
                                gd_rpc_error *err) {
    json_error_t jerr;
    memset(err, 0, sizeof *err);
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return gd_fail(GD_ERR_PARSE, "node answer is not JSON (%s at line %d)", jerr.text,
                       jerr.line);
    gd_status s = GD_OK;
    const json_t *error = json_object_get(root, "error");
    const json_t *res = json_object_get(root, "result");
    if (!json_is_object(root)) {
        s = gd_fail(GD_ERR_PARSE, "node answer is not a JSON object");
    } else if (error != NULL && !json_is_null(error)) {
        int64_t code = 0;
        if (!json_is_object(error) || gd_json_i64(&code, error, "code", 0) != GD_OK ||
            gd_rpc_json_text(err->message, sizeof err->message, error, "message", 1, 1) != GD_OK ||
            gd_rpc_json_text(err->data, sizeof err->data, error, "data", 1, 1) != GD_OK) {
            s = gd_fail(GD_ERR_PARSE, "node answered with a malformed JSON-RPC error");
        } else {
            err->code = code;
            s = gd_fail(GD_ERR_RPC, "node returned JSON-RPC error %lld: %s%s%s", (long long)code,
                        err->message, err->data[0] ? ": " : "", err->data);
        }
    } else if (!json_is_object(res)) {
        s = gd_fail(GD_ERR_PARSE, "node answer has no result object");
    } else {
        *result = json_incref((json_t *)res);
    }
    json_decref(root);
    return s;
}

gd_status gd_rpc_parse_status(gd_node_status *out, const json_t *result) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_rpc_json_text(out->network, sizeof out->network, result, "node_info.network", 0, 0));
    GD_TRY(gd_rpc_json_text(out->moniker, sizeof out->moniker, result, "node_info.moniker", 1, 1));
    GD_TRY(gd_rpc_json_text(out->version, sizeof out->version, result, "node_info.version", 1, 1));
    GD_TRY(gd_rpc_json_text(out->node_id, sizeof out->node_id, result, "node_info.id", 1, 1));
    GD_TRY(gd_json_i64(&out->latest_block_height, result, "sync_info.latest_block_height", 0));
    GD_TRY(gd_json_hash(out->latest_block_hash, result, "sync_info.latest_block_hash", 1));
    GD_TRY(gd_json_hash(out->latest_app_hash, result, "sync_info.latest_app_hash", 1));
    GD_TRY(gd_rpc_json_text(out->latest_block_time, sizeof out->latest_block_time, result,
                            "sync_info.latest_block_time", 1, 1));
    GD_TRY(gd_json_i64(&out->earliest_block_height, result, "sync_info.earliest_block_height",
                       1));
    GD_TRY(gd_json_bool(&out->catching_up, result, "sync_info.catching_up"));
    if (out->latest_block_height < 0)
        return gd_fail(GD_ERR_PARSE, "node reports a negative block height");
    return GD_OK;
}

gd_status gd_rpc_parse_abci_query(gd_abci_query_result *out, const json_t *result) {
    memset(&out->result, 0, sizeof out->result);
    out->height = 0;
    out->value.len = 0;
    const json_t *resp = json_object_get(result, "response");
    if (!json_is_object(resp))
        return gd_fail(GD_ERR_PARSE, "abci_query answer has no response object");
    GD_TRY(gd_json_abci_code(&out->result, resp));
    GD_TRY(gd_json_i64(&out->height, resp, "height", 1));
    const json_t *value = json_object_get(resp, "value");
    if (value == NULL || json_is_null(value))
        return GD_OK;
    if (!json_is_string(value))
        return gd_fail(GD_ERR_PARSE, "abci_query response.value is not a string");
    size_t len = json_string_length(value);
    GD_TRY(gd_buf_reserve(&out->value, gd_base64_decoded_max(len) + 1));
    size_t n = 0;
    if (gd_base64_decode(out->value.data, out->value.cap, &n, json_string_value(value), len) !=
        GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "abci_query response.value");
    out->value.len = n;
    return GD_OK;
}

gd_status gd_rpc_parse_broadcast(gd_broadcast_result *out, const json_t *result) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_json_abci_code(&out->result, result));
    GD_TRY(gd_json_hash(out->hash, result, "hash", 1));
    return GD_OK;
}

gd_status gd_rpc_parse_tx(gd_tx_result *out, const json_t *result) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_json_hash(out->hash, result, "hash", 0));
    GD_TRY(gd_json_i64(&out->height, result, "height", 0));
    GD_TRY(gd_json_u32(&out->index, result, "index"));
    if (out->height <= 0)
        return gd_fail(GD_ERR_PARSE, "tx answer has no positive height");
    const json_t *txr = json_object_get(result, "tx_result");
    if (txr == NULL || json_is_null(txr))
        return GD_OK; /* every field at its zero value */
    if (!json_is_object(txr))
        return gd_fail(GD_ERR_PARSE, "tx answer's tx_result is not an object");
    GD_TRY(gd_json_abci_code(&out->result, txr));
    GD_TRY(gd_json_i64(&out->gas_wanted, txr, "gas_wanted", 1));
    GD_TRY(gd_json_i64(&out->gas_used, txr, "gas_used", 1));
    return GD_OK;
}

gd_status gd_rpc_parse_block(gd_block_info *out, const json_t *result) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_json_hash(out->hash, result, "block_id.hash", 0));
    GD_TRY(gd_json_i64(&out->height, result, "block.header.height", 0));
    GD_TRY(gd_rpc_json_text(out->chain_id, sizeof out->chain_id, result, "block.header.chain_id", 0,
                       0));
    GD_TRY(gd_rpc_json_text(out->time, sizeof out->time, result, "block.header.time", 1, 1));
    GD_TRY(gd_json_hash(out->app_hash, result, "block.header.app_hash", 1));
    GD_TRY(gd_rpc_json_text(out->proposer, sizeof out->proposer, result,
                            "block.header.proposer_address", 1, 0));
    const json_t *txs = gd_json_path(result, "block.data.txs");
    if (txs != NULL && !json_is_null(txs)) {
        if (!json_is_array(txs))
            return gd_fail(GD_ERR_PARSE, "block answer's data.txs is not an array");
        out->n_txs = json_array_size(txs);
    }
    return GD_OK;
}

/* Hints for the codes a user most often meets (cosmos-sdk types/errors). */
static const char *gd_sdk_code_hint(uint32_t code) {
    switch (code) {
    case 4: return "check --chain-id and the account number";
    case 5: return "the account balance does not cover amount plus fees";
    case 11: return "raise --gas";
    case 13: return "raise --fees or --gas-prices to the node's minimum gas price";
    case 19: return "the same transaction is already in the mempool";
    case 20: return "the node's mempool is full; retry later";
    case 21: return "the transaction is too large";
    case 22: return "the account does not exist yet: it needs to receive funds first";
    case 28: return "check --chain-id";
    case 32: return "the account sequence moved; resubmit";
    default: return NULL;
    }
}

void gd_abci_code_describe(const gd_abci_code *code, char *out, size_t cap) {
    const char *space = code->codespace[0] ? code->codespace : "(none)";
    const char *hint = strcmp(code->codespace, "sdk") == 0 ? gd_sdk_code_hint(code->code) : NULL;
    snprintf(out, cap, "codespace %s, code %u: %s%s%s%s", space, code->code,
             code->log[0] ? code->log : "(no log)", hint ? " (" : "", hint ? hint : "",
             hint ? ")" : "");
}
