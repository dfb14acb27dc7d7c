/* The application: module routing, the ante checks, block execution,
 * commit and queries (see app.h). */
#include "chain/module/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/module/auth.h"
#include "chain/module/bank.h"
#include "chain/module/diloco.h"
#include "chain/module/epochs.h"
#include "chain/module/json_util.h"
#include "chain/module/u256.h"
#include "chain/wire/coin.h"
#include "chain/wire/gas_price.h"
#include "chain/wire/pb_strict.h"
#include "chain/wire/tx.h"
#include "chain/wire/tx_decode.h"
#include "common/base64.h"
#include "common/hash.h"
#include "cosmos/base/abci/v1beta1/abci.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"

#define GD_APP_MAX_MODULES 16
#define GD_MAX_GAS_WANTED ((uint64_t)INT64_MAX) /* the SDK's MaxGasWanted */
#define GD_SIMULATE_PATH "/cosmos.tx.v1beta1.Service/Simulate"

/* Hashes of transactions whose signature CheckTx verified. A transaction's
 * bytes fix its signature and chain-id, and an account's number never
 * changes, so DeliverTx may skip verifying them again (the slowest step of
 * a transaction). Open addressing over the first 8 bytes of the hash. */
typedef struct gd_verified_set {
    uint8_t (*slots)[32];
    size_t cap; /* power of two */
    size_t used;
} gd_verified_set;

struct gd_app {
    gd_app_config config;
    gd_verified_set verified;
    gd_store *store;
    gd_kv *check;   /* check state: a cache over the base, reset at commit */
    gd_kv *block;   /* the block being executed; NULL between blocks */
    const gd_module *modules[GD_APP_MAX_MODULES];
    size_t n_modules;
    char chain_id[GD_CHAIN_ID_MAX + 1];
    int64_t height;       /* last committed height */
    int64_t block_height; /* the block being executed */
    uint8_t block_hash[32];
    uint8_t app_hash[32];
    bool initialized;
    gd_gas_price min_price; /* zero: no minimum */
};

static const uint8_t gd_empty_slot[32];

static size_t gd_verified_slot(const gd_verified_set *v, const uint8_t hash[32]) {
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h = h << 8 | hash[i];
    size_t i = (size_t)h & (v->cap - 1);
    while (memcmp(v->slots[i], gd_empty_slot, 32) != 0 && memcmp(v->slots[i], hash, 32) != 0)
        i = (i + 1) & (v->cap - 1);
    return i;
}

static bool gd_verified_has(const gd_verified_set *v, const uint8_t hash[32]) {
    return v->cap && memcmp(v->slots[gd_verified_slot(v, hash)], hash, 32) == 0;
}

/* Remembers a verified hash. The set grows by rehashing up to 2^20 slots;
 * past that it starts over empty (the cache only saves work, it never
 * changes a result). */
static void gd_verified_add(gd_verified_set *v, const uint8_t hash[32]) {
    if (v->cap == 0 || (v->used + 1) * 2 > v->cap) {
        size_t cap = v->cap == 0 ? 4096 : v->cap < (1u << 20) ? v->cap * 2 : v->cap;
        uint8_t (*slots)[32] = calloc(cap, 32);
        if (slots == NULL)
            return;
        gd_verified_set grown = {slots, cap, 0};
        for (size_t i = 0; cap > v->cap && i < v->cap; i++) {
            if (memcmp(v->slots[i], gd_empty_slot, 32) != 0) {
                memcpy(grown.slots[gd_verified_slot(&grown, v->slots[i])], v->slots[i], 32);
                grown.used++;
            }
        }
        free(v->slots);
        *v = grown;
    }
    size_t i = gd_verified_slot(v, hash);
    if (memcmp(v->slots[i], hash, 32) != 0) {
        memcpy(v->slots[i], hash, 32);
        v->used++;
    }
}

void gd_tx_outcome_free(gd_tx_outcome *o) {
    gd_buf_free(&o->data);
    gd_events_free(&o->events);
}

/* The node's minimum gas price ("" for none). */
static gd_status gd_parse_gas_price(gd_app *app, const char *text) {
    memset(&app->min_price, 0, sizeof app->min_price);
    if (text == NULL || text[0] == '\0')
        return GD_OK;
    gd_status s = gd_gas_price_parse(&app->min_price, text);
    if (s != GD_OK)
        return gd_fail_context(s, "minimum gas price");
    return GD_OK;
}

gd_status gd_app_new(gd_app **out, const gd_app_config *config) {
    gd_app *app = calloc(1, sizeof *app);
    if (app == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    if (config)
        app->config = *config;
    gd_status s = gd_parse_gas_price(app, app->config.min_gas_price);
    if (s == GD_OK)
        s = gd_store_new(&app->store);
    if (s == GD_OK)
        s = gd_cache_new(&app->check, gd_store_view(app->store));
    if (s != GD_OK) {
        gd_app_free(app);
        return s;
    }
    *out = app;
    return GD_OK;
}

void gd_app_free(gd_app *app) {
    if (app == NULL)
        return;
    gd_cache_free(app->block);
    gd_cache_free(app->check);
    gd_store_free(app->store);
    free(app->verified.slots);
    free(app);
}

gd_status gd_app_register(gd_app *app, const gd_module *module) {
    if (app->n_modules == GD_APP_MAX_MODULES)
        return gd_fail(GD_ERR_LIMIT, "too many modules");
    for (size_t i = 0; i < app->n_modules; i++)
        if (strcmp(app->modules[i]->name, module->name) == 0)
            return gd_fail(GD_ERR_INVALID, "module %s registered twice", module->name);
    app->modules[app->n_modules++] = module;
    return GD_OK;
}

gd_status gd_app_register_standard(gd_app *app) {
    GD_TRY(gd_app_register(app, &gd_auth_module));
    GD_TRY(gd_app_register(app, &gd_bank_module));
    GD_TRY(gd_app_register(app, &gd_epochs_module));
    return gd_app_register(app, &gd_diloco_module);
}

const gd_app_config *gd_app_get_config(const gd_app *app) { return &app->config; }
int64_t gd_app_height(const gd_app *app) { return app->height; }
const char *gd_app_chain_id(const gd_app *app) { return app->chain_id; }
void gd_app_hash(const gd_app *app, uint8_t out[32]) { memcpy(out, app->app_hash, 32); }
gd_store *gd_app_store(gd_app *app) { return app->store; }

static const gd_msg_route *gd_find_msg(const gd_app *app, const char *type_url,
                                       const gd_module **owner) {
    for (size_t m = 0; m < app->n_modules; m++)
        for (size_t i = 0; i < app->modules[m]->n_msgs; i++)
            if (strcmp(app->modules[m]->msgs[i].type_url, type_url) == 0) {
                if (owner)
                    *owner = app->modules[m];
                return &app->modules[m]->msgs[i];
            }
    return NULL;
}

gd_status gd_msg_route_decode(const gd_msg_route *route, gd_ctx *ctx, ProtobufCMessage **out,
                              const uint8_t *data, size_t len) {
    const ProtobufCMessageDescriptor *d = route->type;
    bool strict = route->decoding == GD_MSG_DECODE_STRICT;
    *out = protobuf_c_message_unpack(d, NULL, len, data);
    if (*out == NULL)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_DECODE, "%s does not decode",
                           strict ? d->name : d->short_name);
    if (strict && gd_pb_reject_unknown(*out, false) != GD_OK) {
        gd_status s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_DECODE, "%s",
                                  gd_error_detail());
        protobuf_c_message_free_unpacked(*out, NULL);
        *out = NULL;
        return s;
    }
    return GD_OK;
}

static const gd_query_route *gd_find_query(const gd_app *app, const char *path) {
    for (size_t m = 0; m < app->n_modules; m++)
        for (size_t i = 0; i < app->modules[m]->n_queries; i++)
            if (strcmp(app->modules[m]->queries[i].path, path) == 0)
                return &app->modules[m]->queries[i];
    return NULL;
}

static gd_ctx gd_make_ctx(gd_app *app, gd_kv *kv, gd_gas_meter *gas, gd_events *events,
                          gd_exec_mode mode, int64_t height) {
    gd_ctx ctx = {.kv = kv, .gas = gas, .events = events, .mode = mode, .height = height,
                  .chain_id = app->chain_id};
    if (mode == GD_EXEC_DELIVER || mode == GD_EXEC_BLOCK)
        ctx.block_hash = app->block_hash;
    return ctx;
}

/* --- genesis -------------------------------------------------------------- */

gd_status gd_app_init_chain(gd_app *app, const json_t *genesis) {
    if (app->initialized)
        return gd_fail(GD_ERR_INVALID, "the chain is already initialised");
    if (!json_is_object(genesis))
        return gd_fail(GD_ERR_PARSE, "genesis must be a JSON object");
    GD_TRY(gd_json_str_field(app->chain_id, sizeof app->chain_id, genesis, "chain_id", false));
    if (app->chain_id[0] == '\0')
        return gd_fail(GD_ERR_PARSE, "genesis chain_id is empty");
    int64_t initial_height;
    GD_TRY(gd_json_i64_field(&initial_height, genesis, "initial_height", true, 1));
    if (initial_height < 1)
        return gd_fail(GD_ERR_PARSE, "genesis initial_height must be at least 1");
    const json_t *app_state = json_object_get(genesis, "app_state");
    if (app_state != NULL && !json_is_object(app_state))
        return gd_fail(GD_ERR_PARSE, "genesis app_state must be an object");
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)app_state, key, value) {
        bool known = false;
        for (size_t m = 0; m < app->n_modules; m++)
            known |= strcmp(app->modules[m]->name, key) == 0;
        if (!known)
            return gd_fail(GD_ERR_PARSE, "genesis app_state has unknown module '%.64s'", key);
    }
    gd_kv *cache = NULL;
    GD_TRY(gd_cache_new(&cache, gd_store_view(app->store)));
    gd_gas_meter gas = {0, 0};
    gd_events events = {0};
    gd_ctx ctx = gd_make_ctx(app, cache, &gas, &events, GD_EXEC_BLOCK, initial_height - 1);
    gd_status s = GD_OK;
    for (size_t m = 0; s == GD_OK && m < app->n_modules; m++) {
        const gd_module *mod = app->modules[m];
        if (mod->init_genesis) {
            s = mod->init_genesis(app, &ctx, json_object_get(app_state, mod->name));
            if (s != GD_OK)
                s = gd_fail_context(GD_ERR_PARSE, "genesis %s", mod->name);
        }
    }
    gd_account fee_collector;
    if (s == GD_OK)
        s = gd_auth_module_account(&ctx, &fee_collector, GD_FEE_COLLECTOR);
    if (s == GD_OK)
        s = gd_cache_write(cache);
    gd_cache_free(cache);
    gd_events_free(&events);
    if (s != GD_OK)
        return s;
    GD_TRY(gd_app_check_invariants(app));
    app->height = initial_height - 1;
    GD_TRY(gd_store_hash(app->store, app->app_hash));
    app->initialized = true;
    /* Genesis state is persisted with the first block. */
    return GD_OK;
}

gd_status gd_app_restored(gd_app *app, const char *chain_id, int64_t height,
                          const uint8_t app_hash[32]) {
    uint8_t h[32];
    GD_TRY(gd_store_hash(app->store, h));
    if (memcmp(h, app_hash, 32) != 0)
        return gd_fail(GD_ERR_PARSE, "restored state does not hash to the committed app hash at "
                                     "height %lld (the data directory is damaged)",
                       (long long)height);
    snprintf(app->chain_id, sizeof app->chain_id, "%s", chain_id);
    app->height = height;
    memcpy(app->app_hash, h, 32);
    app->initialized = true;
    /* Restored keys are not changes to persist again. */
    gd_store_change *changes = NULL;
    size_t n = 0;
    GD_TRY(gd_store_take_changes(app->store, &changes, &n));
    gd_store_changes_free(changes, n);
    return gd_app_check_invariants(app);
}

json_t *gd_app_export(gd_app *app) {
    json_t *state = json_object();
    gd_gas_meter gas = {0, 0};
    gd_ctx ctx = gd_make_ctx(app, gd_store_view(app->store), &gas, NULL, GD_EXEC_QUERY,
                             app->height);
    for (size_t m = 0; state && m < app->n_modules; m++) {
        if (app->modules[m]->export_genesis == NULL)
            continue;
        json_t *j = app->modules[m]->export_genesis(app, &ctx);
        if (j == NULL) {
            json_decref(state);
            return NULL;
        }
        json_object_set_new(state, app->modules[m]->name, j);
    }
    return state;
}

gd_status gd_app_check_invariants(gd_app *app) {
    for (size_t m = 0; m < app->n_modules; m++)
        if (app->modules[m]->check_invariants)
            GD_TRY(app->modules[m]->check_invariants(app, gd_store_view(app->store)));
    return GD_OK;
}

/* --- the ante checks -------------------------------------------------------- */

/* Checks the fee against the node's minimum gas price (CheckTx only), as
 * the SDK's checkTxFeeWithValidatorMinGasPrices: the fee in the price's
 * denom must reach ceil(gas_limit x price). */
static gd_status gd_ante_min_fee(gd_app *app, gd_ctx *ctx, const gd_coin *fees, size_t n_fees,
                                 uint64_t gas_limit) {
    if (gd_gas_price_is_zero(&app->min_price))
        return GD_OK;
    char req[GD_AMOUNT_DIGITS_MAX + 1];
    gd_gas_price_fee(&app->min_price, gas_limit, req);
    gd_u256 need, have;
    if (gd_u256_parse(&need, req) != GD_OK)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INSUFFICIENT_FEE, "fee overflow");
    gd_u256_from_u64(&have, 0);
    for (size_t i = 0; i < n_fees; i++)
        if (strcmp(fees[i].denom, app->min_price.denom) == 0 &&
            gd_u256_parse(&have, fees[i].amount) != GD_OK)
            gd_u256_from_u64(&have, 0);
    if (gd_u256_cmp(&have, &need) >= 0)
        return GD_OK;
    char got[512];
    gd_coins_string(got, sizeof got, fees, n_fees);
    return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INSUFFICIENT_FEE,
                       "insufficient fees; got: %s required: %s%s", got[0] ? got : "0", req,
                       app->min_price.denom);
}

typedef struct gd_ante_result {
    char signer[GD_ADDRESS_STR_MAX];
    /* The transaction's messages, decoded once here for their stateless
     * checks and kept for their execution (gd_run_msgs); gd_run_tx frees
     * them. */
    ProtobufCMessage **msgs;
} gd_ante_result;

static void gd_msgs_free(ProtobufCMessage **msgs, size_t n) {
    for (size_t i = 0; msgs && i < n; i++)
        if (msgs[i])
            protobuf_c_message_free_unpacked(msgs[i], NULL);
    free(msgs);
}

/* The SDK's default ante chain for a single-signer SIGN_MODE_DIRECT
 * transaction, in its order: validate basic, timeout height, memo, gas for
 * size, fee (min price in CheckTx, deduction), public key, signature count
 * and gas, sequence and signature, sequence increment. */
static gd_status gd_ante(gd_app *app, gd_ctx *ctx, const gd_decoded_tx *dec, size_t tx_len,
                         const uint8_t tx_hash[32], gd_ante_result *res) {
    const Cosmos__Tx__V1beta1__TxRaw *raw = gd_decoded_tx_raw(dec);
    const Cosmos__Tx__V1beta1__TxBody *body = gd_decoded_tx_body(dec);
    const Cosmos__Tx__V1beta1__AuthInfo *auth = gd_decoded_tx_auth_info(dec);

    /* Messages: known types, stateless checks, one signer for all. */
    res->signer[0] = '\0';
    for (size_t i = 0; i < body->n_messages; i++) {
        const Google__Protobuf__Any *any = body->messages[i];
        const gd_msg_route *route = gd_find_msg(app, any->type_url ? any->type_url : "", NULL);
        if (route == NULL)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_DECODE,
                               "unable to resolve type URL %.128s",
                               any->type_url ? any->type_url : "");
        char signer[GD_ADDRESS_STR_MAX];
        GD_TRY(gd_msg_route_decode(route, ctx, &res->msgs[i], any->value.data, any->value.len));
        GD_TRY(route->validate(ctx, res->msgs[i], signer, sizeof signer));
        if (res->signer[0] == '\0')
            strcpy(res->signer, signer);
        else if (strcmp(res->signer, signer) != 0)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                               "messages with different signers need a multi-signer "
                               "transaction, which gonka-localnet does not support");
    }
    if (body->unordered)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "unordered transactions are not supported by gonka-localnet");
    if (body->n_extension_options > 0)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, 31, "unknown extension options");
    if (raw->n_signatures == 0)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_NO_SIGNATURES, "no signatures");
    if (auth->n_signer_infos != 1)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_UNAUTHORIZED,
                           "wrong number of signers; expected 1, got %zu", auth->n_signer_infos);
    const Cosmos__Tx__V1beta1__Fee *fee = auth->fee;
    uint64_t gas_limit = fee ? fee->gas_limit : 0;
    if (gas_limit > GD_MAX_GAS_WANTED)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "invalid gas supplied; %llu > %llu", (unsigned long long)gas_limit,
                           (unsigned long long)GD_MAX_GAS_WANTED);
    if (fee && ((fee->payer && fee->payer[0]) || (fee->granter && fee->granter[0])))
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "fee payers and fee grants are not supported by gonka-localnet");
    gd_coin fees[GD_COINS_MAX];
    size_t n_fees = 0;
    for (size_t i = 0; fee && i < fee->n_amount; i++) {
        const Cosmos__Base__V1beta1__Coin *c = fee->amount[i];
        if (i == GD_COINS_MAX || !c->denom || !c->amount || gd_denom_check(c->denom) != GD_OK ||
            gd_amount_check(c->amount) != GD_OK || strcmp(c->amount, "0") == 0 ||
            (i > 0 && strcmp(fees[i - 1].denom, c->denom) >= 0))
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INSUFFICIENT_FEE,
                               "invalid fee amount");
        snprintf(fees[i].denom, sizeof fees[i].denom, "%s", c->denom);
        snprintf(fees[i].amount, sizeof fees[i].amount, "%s", c->amount);
        n_fees++;
    }
    /* From here on gas is metered against the fee's limit. */
    ctx->gas->limit = gas_limit;
    if (gas_limit == 0)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_OUT_OF_GAS,
                           "out of gas in location: txSize; gasWanted: 0, gasUsed: %zu",
                           tx_len * GD_AUTH_TX_SIZE_COST_PER_BYTE);
    if (body->timeout_height > 0 && (uint64_t)ctx->height > body->timeout_height)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_TIMEOUT_HEIGHT,
                           "block height: %lld, timeout height: %llu", (long long)ctx->height,
                           (unsigned long long)body->timeout_height);
    size_t memo_len = body->memo ? strlen(body->memo) : 0;
    if (memo_len > GD_AUTH_MAX_MEMO_CHARACTERS)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_MEMO_TOO_LARGE,
                           "maximum number of characters is %d but received %zu characters",
                           GD_AUTH_MAX_MEMO_CHARACTERS, memo_len);
    GD_TRY(gd_ctx_gas(ctx, (uint64_t)tx_len * GD_AUTH_TX_SIZE_COST_PER_BYTE, "txSize"));

    gd_account acc;
    gd_status s = gd_auth_get(ctx, &acc, res->signer);
    if (s == GD_ERR_NOT_FOUND)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_UNKNOWN_ADDRESS,
                           "account %s does not exist", res->signer);
    GD_TRY(s);

    if (ctx->mode == GD_EXEC_CHECK)
        GD_TRY(gd_ante_min_fee(app, ctx, fees, n_fees, gas_limit));
    if (n_fees > 0) {
        gd_account collector;
        GD_TRY(gd_auth_module_account(ctx, &collector, GD_FEE_COLLECTOR));
        for (size_t i = 0; i < n_fees; i++) {
            gd_u256 have, want;
            GD_TRY(gd_bank_balance(ctx, &have, res->signer, fees[i].denom));
            GD_TRY(gd_u256_parse(&want, fees[i].amount));
            if (gd_u256_cmp(&have, &want) < 0) {
                char h[GD_U256_DEC_MAX + 1];
                gd_u256_format(h, &have);
                return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INSUFFICIENT_FUNDS,
                                   "%s%s is smaller than %s%s", h, fees[i].denom,
                                   fees[i].amount, fees[i].denom);
            }
        }
        /* The fee moves without the bank's transfer events, as the SDK's
         * DeductFees does through SendCoinsFromAccountToModule. */
        gd_events quiet = {0};
        gd_events *loud = ctx->events;
        ctx->events = &quiet;
        s = gd_bank_send(ctx, res->signer, collector.address, fees, n_fees);
        ctx->events = loud;
        gd_events_free(&quiet);
        GD_TRY(s);
    }
    char fee_text[512];
    gd_coins_string(fee_text, sizeof fee_text, fees, n_fees);
    GD_TRY(gd_events_add(ctx->events, "tx", "fee", fee_text, "fee_payer", res->signer, NULL));

    /* Public key: from the transaction, or already on the account. */
    const Cosmos__Tx__V1beta1__SignerInfo *si = auth->signer_infos[0];
    uint8_t pubkey[GD_PUBKEY_LEN];
    if (si->public_key != NULL) {
        Cosmos__Crypto__Secp256k1__PubKey *pk = NULL;
        if (si->public_key->type_url &&
            strcmp(si->public_key->type_url, "/cosmos.crypto.secp256k1.PubKey") == 0)
            pk = cosmos__crypto__secp256k1__pub_key__unpack(NULL, si->public_key->value.len,
                                                            si->public_key->value.data);
        bool ok = pk && pk->key.len == GD_PUBKEY_LEN && gd_pubkey_valid(pk->key.data);
        if (ok)
            memcpy(pubkey, pk->key.data, GD_PUBKEY_LEN);
        if (pk)
            cosmos__crypto__secp256k1__pub_key__free_unpacked(pk, NULL);
        if (!ok)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_PUBKEY,
                               "only compressed secp256k1 public keys are supported");
        char from_key[GD_ADDRESS_STR_MAX];
        GD_TRY(gd_address_from_pubkey(from_key, sizeof from_key, GD_ADDRESS_PREFIX, pubkey));
        if (strcmp(from_key, res->signer) != 0)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_PUBKEY,
                               "pubKey does not match signer address %s with signer index: 0",
                               res->signer);
        if (acc.has_pubkey && memcmp(acc.pubkey, pubkey, GD_PUBKEY_LEN) != 0)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_PUBKEY,
                               "pubKey does not match the account's public key");
        if (!acc.has_pubkey) {
            memcpy(acc.pubkey, pubkey, GD_PUBKEY_LEN);
            acc.has_pubkey = true;
        }
    } else if (acc.has_pubkey) {
        memcpy(pubkey, acc.pubkey, GD_PUBKEY_LEN);
    } else {
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_PUBKEY,
                           "pubkey on account is not set");
    }
    if (raw->n_signatures > GD_AUTH_TX_SIG_LIMIT)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TOO_MANY_SIGNATURES,
                           "signatures: %zu, limit: %d", raw->n_signatures, GD_AUTH_TX_SIG_LIMIT);
    GD_TRY(gd_ctx_gas(ctx, GD_AUTH_SIG_VERIFY_COST_SECP256K1, "ante verify: secp256k1"));

    if (si->sequence != acc.sequence)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_WRONG_SEQUENCE,
                           "account sequence mismatch, expected %llu, got %llu",
                           (unsigned long long)acc.sequence, (unsigned long long)si->sequence);
    /* Known hashes skip verification in DeliverTx and in the mempool's
     * recheck after each block alike. */
    bool known = gd_verified_has(&app->verified, tx_hash);
    if (ctx->mode != GD_EXEC_SIMULATE && !known) {
        if (gd_decoded_tx_verify(dec, app->chain_id, acc.number) != GD_OK)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_UNAUTHORIZED,
                               "signature verification failed; please verify account number "
                               "(%llu) and chain-id (%s)", (unsigned long long)acc.number,
                               app->chain_id);
        if (ctx->mode == GD_EXEC_CHECK)
            gd_verified_add(&app->verified, tx_hash);
    }
    char acc_seq[GD_ADDRESS_STR_MAX + 24];
    snprintf(acc_seq, sizeof acc_seq, "%s/%llu", res->signer, (unsigned long long)acc.sequence);
    GD_TRY(gd_events_add(ctx->events, "tx", "acc_seq", acc_seq, NULL));
    char sig_b64[gd_base64_encoded_len(GD_SIGNATURE_LEN) + 1];
    gd_base64_encode(sig_b64, raw->signatures[0].data, raw->signatures[0].len);
    GD_TRY(gd_events_add(ctx->events, "tx", "signature", sig_b64, NULL));
    acc.sequence++;
    return gd_auth_set(ctx, &acc);
}

/* --- running a transaction --------------------------------------------------- */

/* Adds msg_index to the events a message emitted (events[from..]). */
static gd_status gd_events_tag_index(gd_events *events, size_t from, size_t msg_index) {
    char idx[24];
    snprintf(idx, sizeof idx, "%zu", msg_index);
    for (size_t e = from; e < events->n; e++) {
        gd_event *ev = &events->items[e];
        gd_event_attr *attrs = realloc(ev->attrs, (ev->n_attrs + 1) * sizeof *attrs);
        if (attrs == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for events");
        ev->attrs = attrs;
        attrs[ev->n_attrs] = (gd_event_attr){strdup("msg_index"), strdup(idx), true};
        if (!attrs[ev->n_attrs].key || !attrs[ev->n_attrs].value)
            return gd_fail(GD_ERR_NOMEM, "out of memory for events");
        ev->n_attrs++;
    }
    return GD_OK;
}

/* Executes the messages (decoded by the ante checks) on ctx (a cache);
 * fills the TxMsgData. */
static gd_status gd_run_msgs(gd_app *app, gd_ctx *ctx, const gd_decoded_tx *dec,
                             const gd_ante_result *ante, gd_buf *data) {
    const Cosmos__Tx__V1beta1__TxBody *body = gd_decoded_tx_body(dec);
    size_t n = body->n_messages;
    gd_buf *responses = calloc(n, sizeof *responses);
    Google__Protobuf__Any *anys = calloc(n, sizeof *anys);
    Google__Protobuf__Any **any_ptrs = calloc(n, sizeof *any_ptrs);
    char (*urls)[GD_TYPE_URL_MAX + 8] = calloc(n, sizeof *urls);
    gd_status s = (responses && anys && any_ptrs && urls) ? GD_OK
                                                          : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        const Google__Protobuf__Any *any = body->messages[i];
        const gd_module *owner = NULL;
        const gd_msg_route *route = gd_find_msg(app, any->type_url, &owner);
        size_t first_event = ctx->events->n;
        s = gd_events_add(ctx->events, "message", "action", any->type_url, "sender",
                          ante->signer, "module", owner->name, NULL);
        if (s == GD_OK)
            s = route->execute(app, ctx, ante->msgs[i], &responses[i]);
        if (s == GD_OK)
            s = gd_events_tag_index(ctx->events, first_event, i);
        if (s == GD_OK) {
            snprintf(urls[i], sizeof urls[i], "%sResponse", any->type_url);
            google__protobuf__any__init(&anys[i]);
            anys[i].type_url = urls[i];
            anys[i].value.data = responses[i].data;
            anys[i].value.len = responses[i].len;
            any_ptrs[i] = &anys[i];
        } else if (s == GD_ERR_CHAIN && ctx->err.code != 0) {
            /* The SDK prefixes a failing message's error with its index. */
            char log[GD_ABCI_LOG_MAX];
            snprintf(log, sizeof log, "failed to execute message; message index: %zu: %s", i,
                     ctx->err.log);
            memcpy(ctx->err.log, log, sizeof log);
        }
    }
    if (s == GD_OK) {
        Cosmos__Base__Abci__V1beta1__TxMsgData msg_data = COSMOS__BASE__ABCI__V1BETA1__TX_MSG_DATA__INIT;
        msg_data.n_msg_responses = n;
        msg_data.msg_responses = any_ptrs;
        size_t size = protobuf_c_message_get_packed_size(&msg_data.base);
        data->len = 0;
        s = gd_buf_reserve(data, size + 1);
        if (s == GD_OK)
            data->len = protobuf_c_message_pack(&msg_data.base, data->data);
    }
    for (size_t i = 0; responses && i < n; i++)
        gd_buf_free(&responses[i]);
    free(responses);
    free(anys);
    free(any_ptrs);
    free(urls);
    return s;
}

/* A failure of this node rather than of the transaction: out of memory, a
 * file or the network. It may not become a transaction result, since
 * another node would not have failed and would store another result and
 * app hash: the block is abandoned and the node stops instead. Everything
 * else (module errors, malformed bytes, limits) follows from the
 * transaction and the state alone. */
static bool gd_status_is_local(gd_status s) {
    return s == GD_ERR_NOMEM || s == GD_ERR_IO || s == GD_ERR_PERMISSION ||
           s == GD_ERR_NETWORK || s == GD_ERR_TIMEOUT || s == GD_ERR_RPC;
}

/* Turns a failed step into an outcome: module errors carry their code;
 * anything else is an internal error the SDK would report as code 1. */
static void gd_outcome_fail(gd_tx_outcome *out, const gd_ctx *ctx, gd_status s) {
    if (s == GD_ERR_CHAIN && ctx->err.code != 0) {
        out->err = ctx->err;
    } else {
        out->err.code = 1;
        snprintf(out->err.codespace, sizeof out->err.codespace, "%s", GD_CODESPACE_SDK);
        snprintf(out->err.log, sizeof out->err.log, "internal error: %s", gd_error_detail());
    }
}

/* Runs a transaction in mode on top of parent: ante (its writes kept even
 * when a message fails), then messages unless checking. */
static gd_status gd_run_tx(gd_app *app, gd_kv *parent, gd_tx_outcome *out, gd_exec_mode mode,
                           int64_t height, const uint8_t *tx, size_t len) {
    memset(out, 0, sizeof *out);
    gd_gas_meter gas = {0, 0};
    gd_events ante_events = {0};
    gd_ctx ctx = gd_make_ctx(app, NULL, &gas, &ante_events, mode, height);
    gd_decoded_tx *dec = NULL;
    gd_status s = gd_tx_decode(&dec, tx, len);
    if (s != GD_OK) {
        s = gd_ctx_fail(&ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_DECODE, "%s", gd_error_detail());
        gd_outcome_fail(out, &ctx, s);
        return GD_OK;
    }
    const Cosmos__Tx__V1beta1__AuthInfo *auth = gd_decoded_tx_auth_info(dec);
    out->gas_wanted = auth->fee ? auth->fee->gas_limit : 0;
    gd_kv *ante_cache = NULL, *msg_cache = NULL;
    size_t n_msgs = gd_decoded_tx_body(dec)->n_messages;
    gd_ante_result ante = {.msgs = calloc(n_msgs + 1, sizeof *ante.msgs)};
    uint8_t tx_hash[32];
    gd_sha256(tx_hash, tx, len);
    s = ante.msgs ? gd_cache_new(&ante_cache, parent) : gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK) {
        ctx.kv = ante_cache;
        s = gd_ante(app, &ctx, dec, len, tx_hash, &ante);
    }
    if (s != GD_OK) {
        gd_outcome_fail(out, &ctx, s);
        out->gas_used = gas.used;
        gd_events_free(&ante_events);
        gd_cache_free(ante_cache);
        gd_msgs_free(ante.msgs, n_msgs);
        gd_decoded_tx_free(dec);
        return gd_status_is_local(s) ? s : GD_OK;
    }
    /* Ante passed: its state (sequence, fee) stands whatever the messages do. */
    s = gd_cache_write(ante_cache);
    gd_events msg_events = {0};
    if (s == GD_OK && mode != GD_EXEC_CHECK) {
        s = gd_cache_new(&msg_cache, ante_cache);
        if (s == GD_OK) {
            ctx.kv = msg_cache;
            ctx.events = &msg_events;
            s = gd_run_msgs(app, &ctx, dec, &ante, &out->data);
        }
        if (s == GD_OK)
            s = gd_cache_write(msg_cache);
    }
    gd_status internal = GD_OK;
    if (s == GD_OK) {
        internal = gd_events_move(&ante_events, &msg_events);
    } else if (gd_status_is_local(s)) {
        internal = s; /* not a result: the caller abandons the block */
    } else {
        gd_outcome_fail(out, &ctx, s);
        out->data.len = 0;
    }
    if (internal == GD_OK)
        internal = gd_cache_write(ante_cache);
    out->events = ante_events;
    out->gas_used = gas.used;
    gd_events_free(&msg_events);
    gd_cache_free(msg_cache);
    gd_cache_free(ante_cache);
    gd_msgs_free(ante.msgs, n_msgs);
    gd_decoded_tx_free(dec);
    return internal;
}

gd_status gd_app_check_tx(gd_app *app, gd_tx_outcome *out, const uint8_t *tx, size_t len) {
    if (!app->initialized)
        return gd_fail(GD_ERR_INVALID, "the chain is not initialised");
    return gd_run_tx(app, app->check, out, GD_EXEC_CHECK, app->height + 1, tx, len);
}

gd_status gd_app_begin_block(gd_app *app, int64_t height, const uint8_t block_hash[32],
                             gd_events *block_events) {
    if (!app->initialized)
        return gd_fail(GD_ERR_INVALID, "the chain is not initialised");
    if (app->block != NULL)
        return gd_fail(GD_ERR_INVALID, "a block is already open");
    if (height != app->height + 1)
        return gd_fail(GD_ERR_INVALID, "block %lld does not follow %lld", (long long)height,
                       (long long)app->height);
    GD_TRY(gd_cache_new(&app->block, gd_store_view(app->store)));
    app->block_height = height;
    memcpy(app->block_hash, block_hash, 32);
    gd_gas_meter gas = {0, 0};
    gd_ctx ctx = gd_make_ctx(app, app->block, &gas, block_events, GD_EXEC_BLOCK, height);
    for (size_t m = 0; m < app->n_modules; m++)
        if (app->modules[m]->begin_block)
            GD_TRY(app->modules[m]->begin_block(app, &ctx));
    return GD_OK;
}

gd_status gd_app_deliver_tx(gd_app *app, gd_tx_outcome *out, const uint8_t *tx, size_t len) {
    if (app->block == NULL)
        return gd_fail(GD_ERR_INVALID, "no block is open");
    return gd_run_tx(app, app->block, out, GD_EXEC_DELIVER, app->block_height, tx, len);
}

gd_status gd_app_end_block(gd_app *app, gd_events *block_events) {
    if (app->block == NULL)
        return gd_fail(GD_ERR_INVALID, "no block is open");
    gd_gas_meter gas = {0, 0};
    gd_ctx ctx = gd_make_ctx(app, app->block, &gas, block_events, GD_EXEC_BLOCK,
                             app->block_height);
    for (size_t m = 0; m < app->n_modules; m++)
        if (app->modules[m]->end_block)
            GD_TRY(app->modules[m]->end_block(app, &ctx));
    return GD_OK;
}

gd_status gd_app_commit(gd_app *app, uint8_t app_hash[32]) {
    if (app->block == NULL)
        return gd_fail(GD_ERR_INVALID, "no block is open");
    GD_TRY(gd_cache_write(app->block));
    gd_cache_free(app->block);
    app->block = NULL;
    app->height = app->block_height;
    GD_TRY(gd_store_hash(app->store, app->app_hash));
    memcpy(app_hash, app->app_hash, 32);
    gd_cache_free(app->check);
    app->check = NULL;
    return gd_cache_new(&app->check, gd_store_view(app->store));
    /* The verified set keeps mempool transactions' hashes across blocks; it
     * clears itself when full. */
}

gd_status gd_app_simulate(gd_app *app, gd_tx_outcome *out, const uint8_t *tx, size_t len) {
    if (!app->initialized)
        return gd_fail(GD_ERR_INVALID, "the chain is not initialised");
    gd_kv *scratch = NULL;
    GD_TRY(gd_cache_new(&scratch, app->check));
    gd_status s = gd_run_tx(app, scratch, out, GD_EXEC_SIMULATE, app->height + 1, tx, len);
    gd_cache_free(scratch);
    return s;
}

/* --- queries ------------------------------------------------------------------ */

static gd_status gd_query_simulate(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                                   gd_buf *response) {
    Cosmos__Tx__V1beta1__SimulateRequest *r =
        cosmos__tx__v1beta1__simulate_request__unpack(NULL, len, req);
    if (r == NULL || r->tx_bytes.len == 0) {
        if (r)
            cosmos__tx__v1beta1__simulate_request__free_unpacked(r, NULL);
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "rpc error: code = InvalidArgument desc = empty txBytes is not allowed");
    }
    gd_tx_outcome out;
    gd_status s = gd_app_simulate(app, &out, r->tx_bytes.data, r->tx_bytes.len);
    cosmos__tx__v1beta1__simulate_request__free_unpacked(r, NULL);
    if (s != GD_OK)
        return s;
    if (out.err.code != 0) {
        ctx->err = out.err;
        gd_tx_outcome_free(&out);
        return gd_fail(GD_ERR_CHAIN, "%s", ctx->err.log);
    }
    Cosmos__Base__Abci__V1beta1__GasInfo gas = COSMOS__BASE__ABCI__V1BETA1__GAS_INFO__INIT;
    gas.gas_wanted = out.gas_wanted;
    gas.gas_used = out.gas_used;
    Cosmos__Base__Abci__V1beta1__Result result = COSMOS__BASE__ABCI__V1BETA1__RESULT__INIT;
    result.data.data = out.data.data;
    result.data.len = out.data.len;
    Cosmos__Tx__V1beta1__SimulateResponse resp = COSMOS__TX__V1BETA1__SIMULATE_RESPONSE__INIT;
    resp.gas_info = &gas;
    resp.result = &result;
    s = gd_buf_reserve(response, protobuf_c_message_get_packed_size(&resp.base) + 1);
    if (s == GD_OK)
        response->len = protobuf_c_message_pack(&resp.base, response->data);
    gd_tx_outcome_free(&out);
    return s;
}

gd_status gd_app_query(gd_app *app, const char *path, const uint8_t *data, size_t len,
                       gd_buf *response, gd_abci_error *err) {
    memset(err, 0, sizeof *err);
    response->len = 0;
    gd_gas_meter gas = {0, 0};
    gd_ctx ctx = gd_make_ctx(app, gd_store_view(app->store), &gas, NULL, GD_EXEC_QUERY,
                             app->height);
    gd_status s;
    if (strcmp(path, GD_SIMULATE_PATH) == 0) {
        s = gd_query_simulate(app, &ctx, data, len, response);
    } else {
        const gd_query_route *route = gd_find_query(app, path);
        if (route == NULL)
            s = gd_ctx_fail(&ctx, GD_CODESPACE_SDK, GD_SDK_ERR_UNKNOWN_REQUEST,
                            "unknown query path");
        else
            s = route->handle(app, &ctx, data, len, response);
    }
    if (s == GD_ERR_CHAIN && ctx.err.code != 0) {
        *err = ctx.err;
        response->len = 0;
        return GD_OK;
    }
    return s;
}
