/* x/bank: balances, supply, MsgSend, Balance query, genesis, invariants. */
#include "chain/module/bank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/auth.h"
#include "chain/module/json_util.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/tx.pb-c.h"

#define GD_BANK_PREFIX 0x02
#define GD_BANK_KEY_SUPPLY 0x00
#define GD_BANK_KEY_BALANCE 0x01
#define GD_BANK_KEY_MAX (3 + GD_ADDRESS_RAW_MAX + GD_DENOM_MAX)

void gd_coins_string(char *out, size_t cap, const gd_coin *coins, size_t n) {
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && o < cap; i++) {
        int w = snprintf(out + o, cap - o, "%s%s%s", i ? "," : "", coins[i].amount,
                         coins[i].denom);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

static gd_status gd_balance_key(uint8_t *key, size_t *key_len, const char *address,
                                const char *denom) {
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t raw_len;
    GD_TRY(gd_address_decode(raw, &raw_len, address, GD_ADDRESS_PREFIX));
    size_t dl = strlen(denom);
    if (dl > GD_DENOM_MAX)
        return gd_fail(GD_ERR_INVALID, "denom too long");
    key[0] = GD_BANK_PREFIX;
    key[1] = GD_BANK_KEY_BALANCE;
    key[2] = (uint8_t)raw_len;
    memcpy(key + 3, raw, raw_len);
    memcpy(key + 3 + raw_len, denom, dl);
    *key_len = 3 + raw_len + dl;
    return GD_OK;
}

static gd_status gd_supply_key(uint8_t *key, size_t *key_len, const char *denom) {
    size_t dl = strlen(denom);
    if (dl > GD_DENOM_MAX)
        return gd_fail(GD_ERR_INVALID, "denom too long");
    key[0] = GD_BANK_PREFIX;
    key[1] = GD_BANK_KEY_SUPPLY;
    memcpy(key + 2, denom, dl);
    *key_len = 2 + dl;
    return GD_OK;
}

/* Reads a stored decimal amount (absent = 0). */
static gd_status gd_read_amount(gd_ctx *ctx, gd_u256 *out, const uint8_t *key, size_t key_len) {
    const uint8_t *v;
    size_t vlen;
    gd_status s = gd_ctx_get(ctx, key, key_len, &v, &vlen);
    if (s == GD_ERR_NOT_FOUND) {
        gd_u256_from_u64(out, 0);
        return GD_OK;
    }
    GD_TRY(s);
    char text[GD_U256_DEC_MAX + 1];
    if (vlen == 0 || vlen > GD_U256_DEC_MAX)
        return gd_fail(GD_ERR_PARSE, "stored amount is malformed");
    memcpy(text, v, vlen);
    text[vlen] = '\0';
    return gd_u256_parse(out, text);
}

/* Writes an amount; zero deletes the key (zero balances are not stored). */
static gd_status gd_write_amount(gd_ctx *ctx, const uint8_t *key, size_t key_len,
                                 const gd_u256 *v) {
    if (gd_u256_is_zero(v))
        return gd_ctx_delete(ctx, key, key_len);
    char text[GD_U256_DEC_MAX + 1];
    gd_u256_format(text, v);
    return gd_ctx_set(ctx, key, key_len, (const uint8_t *)text, strlen(text));
}

gd_status gd_bank_balance(gd_ctx *ctx, gd_u256 *out, const char *address, const char *denom) {
    uint8_t key[GD_BANK_KEY_MAX];
    size_t key_len = 0;
    GD_TRY(gd_balance_key(key, &key_len, address, denom));
    return gd_read_amount(ctx, out, key, key_len);
}

/* Adds (sign > 0) or subtracts coins from an account, optionally the supply. */
static gd_status gd_bank_change(gd_ctx *ctx, const char *address, const gd_coin *coin, int sign,
                                bool supply) {
    uint8_t key[GD_BANK_KEY_MAX];
    size_t key_len = 0;
    gd_u256 amount, have, next;
    if (gd_u256_parse(&amount, coin->amount) != GD_OK)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_COINS, "invalid amount %s",
                           coin->amount);
    GD_TRY(gd_balance_key(key, &key_len, address, coin->denom));
    GD_TRY(gd_read_amount(ctx, &have, key, key_len));
    if (sign > 0 ? !gd_u256_add(&next, &have, &amount) : !gd_u256_sub(&next, &have, &amount)) {
        char have_text[GD_U256_DEC_MAX + 1];
        gd_u256_format(have_text, &have);
        if (sign > 0)
            return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_COINS,
                               "balance overflow for %s", coin->denom);
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INSUFFICIENT_FUNDS,
                           "spendable balance %s%s is smaller than %s%s", have_text, coin->denom,
                           coin->amount, coin->denom);
    }
    GD_TRY(gd_write_amount(ctx, key, key_len, &next));
    if (!supply)
        return GD_OK;
    GD_TRY(gd_supply_key(key, &key_len, coin->denom));
    GD_TRY(gd_read_amount(ctx, &have, key, key_len));
    if (sign > 0 ? !gd_u256_add(&next, &have, &amount) : !gd_u256_sub(&next, &have, &amount))
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_COINS,
                           "supply of %s would leave range", coin->denom);
    return gd_write_amount(ctx, key, key_len, &next);
}

static gd_status gd_ensure_account(gd_ctx *ctx, const char *address) {
    gd_account acc;
    gd_status s = gd_auth_get(ctx, &acc, address);
    if (s == GD_ERR_NOT_FOUND)
        return gd_auth_create(ctx, &acc, address);
    return s;
}

gd_status gd_bank_send(gd_ctx *ctx, const char *from, const char *to, const gd_coin *coins,
                       size_t n) {
    for (size_t i = 0; i < n; i++)
        GD_TRY(gd_bank_change(ctx, from, &coins[i], -1, false));
    GD_TRY(gd_ensure_account(ctx, to));
    for (size_t i = 0; i < n; i++)
        GD_TRY(gd_bank_change(ctx, to, &coins[i], +1, false));
    char amount[GD_COINS_MAX * (GD_DENOM_MAX + GD_AMOUNT_DIGITS_MAX + 2)];
    gd_coins_string(amount, sizeof amount, coins, n);
    GD_TRY(gd_events_add(ctx->events, "coin_spent", "spender", from, "amount", amount, NULL));
    GD_TRY(gd_events_add(ctx->events, "coin_received", "receiver", to, "amount", amount, NULL));
    GD_TRY(gd_events_add(ctx->events, "transfer", "recipient", to, "sender", from, "amount",
                         amount, NULL));
    return gd_events_add(ctx->events, "message", "sender", from, NULL);
}

gd_status gd_bank_mint(gd_ctx *ctx, const char *to, const gd_coin *coins, size_t n) {
    GD_TRY(gd_ensure_account(ctx, to));
    for (size_t i = 0; i < n; i++)
        GD_TRY(gd_bank_change(ctx, to, &coins[i], +1, true));
    return GD_OK;
}

gd_status gd_bank_burn(gd_ctx *ctx, const char *from, const gd_coin *coins, size_t n) {
    for (size_t i = 0; i < n; i++)
        GD_TRY(gd_bank_change(ctx, from, &coins[i], -1, true));
    return GD_OK;
}

/* --- MsgSend -------------------------------------------------------------- */

/* Copies protobuf coins into gd_coin, checking the SDK's Coins.Validate:
 * valid denoms, positive amounts, sorted, no repeats. */
static gd_status gd_coins_from_msg(gd_coin *out, size_t *n, Cosmos__Base__V1beta1__Coin *const *in,
                                   size_t count) {
    if (count == 0)
        return gd_fail(GD_ERR_INVALID, "no coins");
    if (count > GD_COINS_MAX)
        return gd_fail(GD_ERR_INVALID, "more than %d coins", GD_COINS_MAX);
    for (size_t i = 0; i < count; i++) {
        const char *denom = in[i]->denom ? in[i]->denom : "";
        const char *amount = in[i]->amount ? in[i]->amount : "";
        GD_TRY(gd_denom_check(denom));
        GD_TRY(gd_amount_check(amount));
        if (strcmp(amount, "0") == 0)
            return gd_fail(GD_ERR_INVALID, "coin %s%s is not positive", amount, denom);
        if (i > 0 && strcmp(out[i - 1].denom, denom) >= 0)
            return gd_fail(GD_ERR_INVALID, "coins are not sorted by denom or repeat %s", denom);
        snprintf(out[i].denom, sizeof out[i].denom, "%s", denom);
        snprintf(out[i].amount, sizeof out[i].amount, "%s", amount);
    }
    *n = count;
    return GD_OK;
}

static gd_status gd_msg_send_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer,
                                      size_t cap) {
    const Cosmos__Bank__V1beta1__MsgSend *m = (const Cosmos__Bank__V1beta1__MsgSend *)msg;
    gd_status s = GD_OK;
    gd_coin coins[GD_COINS_MAX];
    size_t n;
    if (m->from_address == NULL || gd_address_check(m->from_address) != GD_OK)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS,
                        "invalid from address: %s", gd_error_detail());
    else if (m->to_address == NULL || gd_address_check(m->to_address) != GD_OK)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS,
                        "invalid to address: %s", gd_error_detail());
    else if (gd_coins_from_msg(coins, &n, m->amount, m->n_amount) != GD_OK)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_COINS, "%s", gd_error_detail());
    else if (strlen(m->from_address) >= cap)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS, "address too long");
    else
        strcpy(signer, m->from_address);
    return s;
}

static gd_status gd_msg_send_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                                     gd_buf *response) {
    (void)app;
    const Cosmos__Bank__V1beta1__MsgSend *m = (const Cosmos__Bank__V1beta1__MsgSend *)msg;
    gd_coin coins[GD_COINS_MAX];
    size_t n = 0;
    gd_account to;
    gd_status s = gd_coins_from_msg(coins, &n, m->amount, m->n_amount);
    if (s != GD_OK)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_COINS, "%s", gd_error_detail());
    else if (gd_auth_get(ctx, &to, m->to_address) == GD_OK && to.is_module)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_UNAUTHORIZED,
                        "%s is not allowed to receive funds", m->to_address);
    else
        s = gd_bank_send(ctx, m->from_address, m->to_address, coins, n);
    if (s == GD_OK)
        s = gd_events_add(ctx->events, "message", "module", "bank", NULL);
    response->len = 0; /* MsgSendResponse is empty */
    return s;
}

/* --- Balance query --------------------------------------------------------- */

static gd_status gd_bank_query_balance(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                                  gd_buf *resp) {
    (void)app;
    Cosmos__Bank__V1beta1__QueryBalanceRequest *r =
        cosmos__bank__v1beta1__query_balance_request__unpack(NULL, len, req);
    if (r == NULL)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                           "rpc error: code = InvalidArgument desc = the request does not decode");
    gd_status s = GD_OK;
    gd_u256 amount;
    char text[GD_U256_DEC_MAX + 1];
    if (r->address == NULL || gd_address_check(r->address) != GD_OK)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                        "rpc error: code = InvalidArgument desc = invalid address: %s",
                        gd_error_detail());
    else if (r->denom == NULL || gd_denom_check(r->denom) != GD_OK)
        s = gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                        "rpc error: code = InvalidArgument desc = invalid denom");
    else
        s = gd_bank_balance(ctx, &amount, r->address, r->denom);
    if (s == GD_OK) {
        gd_u256_format(text, &amount);
        Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
        coin.denom = r->denom;
        coin.amount = text;
        Cosmos__Bank__V1beta1__QueryBalanceResponse out =
            COSMOS__BANK__V1BETA1__QUERY_BALANCE_RESPONSE__INIT;
        out.balance = &coin;
        s = gd_buf_reserve(resp, protobuf_c_message_get_packed_size(&out.base) + 1);
        if (s == GD_OK)
            resp->len = protobuf_c_message_pack(&out.base, resp->data);
    }
    cosmos__bank__v1beta1__query_balance_request__free_unpacked(r, NULL);
    return s;
}

/* --- genesis ---------------------------------------------------------------- */

static gd_status gd_coins_from_json(gd_coin *out, size_t *n, const json_t *arr, bool positive) {
    if (!json_is_array(arr))
        return gd_fail(GD_ERR_PARSE, "coins must be an array");
    if (json_array_size(arr) > GD_COINS_MAX)
        return gd_fail(GD_ERR_PARSE, "more than %d coins", GD_COINS_MAX);
    size_t i;
    const json_t *c;
    json_array_foreach(arr, i, c) {
        GD_TRY(gd_json_only_keys(c, "coin", "denom", "amount", NULL));
        GD_TRY(gd_json_str_field(out[i].denom, sizeof out[i].denom, c, "denom", false));
        GD_TRY(gd_json_str_field(out[i].amount, sizeof out[i].amount, c, "amount", false));
        if (gd_denom_check(out[i].denom) != GD_OK || gd_amount_check(out[i].amount) != GD_OK)
            return gd_fail_context(GD_ERR_PARSE, "coin %zu", i);
        if (positive && strcmp(out[i].amount, "0") == 0)
            return gd_fail(GD_ERR_PARSE, "coin %zu is zero", i);
        if (i > 0 && strcmp(out[i - 1].denom, out[i].denom) >= 0)
            return gd_fail(GD_ERR_PARSE, "coins must be sorted by denom without repeats");
    }
    *n = json_array_size(arr);
    return GD_OK;
}

static gd_status gd_bank_init_genesis(gd_app *app, gd_ctx *ctx, const json_t *state) {
    (void)app;
    if (state == NULL)
        return GD_OK;
    GD_TRY(gd_json_only_keys(state, "bank genesis", "params", "balances", "supply",
                             "denom_metadata", "send_enabled", NULL));
    const json_t *balances = json_object_get(state, "balances");
    if (balances != NULL && !json_is_array(balances))
        return gd_fail(GD_ERR_PARSE, "bank.balances must be an array");
    size_t i;
    const json_t *b;
    json_array_foreach(balances, i, b) {
        char address[GD_ADDRESS_STR_MAX];
        gd_coin coins[GD_COINS_MAX];
        size_t n;
        if (gd_json_only_keys(b, "balance", "address", "coins", NULL) != GD_OK ||
            gd_json_str_field(address, sizeof address, b, "address", false) != GD_OK ||
            gd_address_check(address) != GD_OK ||
            gd_coins_from_json(coins, &n, json_object_get(b, "coins"), true) != GD_OK)
            return gd_fail_context(GD_ERR_PARSE, "bank.balances[%zu]", i);
        gd_u256 existing;
        for (size_t k = 0; k < n; k++) {
            GD_TRY(gd_bank_balance(ctx, &existing, address, coins[k].denom));
            if (!gd_u256_is_zero(&existing))
                return gd_fail(GD_ERR_PARSE, "bank.balances: %s appears twice", address);
        }
        if (gd_bank_mint(ctx, address, coins, n) != GD_OK)
            return gd_fail_context(GD_ERR_PARSE, "bank.balances[%zu]", i);
    }
    /* A declared supply must equal the sum of the balances. */
    const json_t *supply = json_object_get(state, "supply");
    if (supply != NULL && !json_is_null(supply) && json_array_size(supply) > 0) {
        gd_coin coins[GD_COINS_MAX];
        size_t n;
        if (gd_coins_from_json(coins, &n, supply, false) != GD_OK)
            return gd_fail_context(GD_ERR_PARSE, "bank.supply");
        for (size_t k = 0; k < n; k++) {
            uint8_t key[GD_BANK_KEY_MAX];
            size_t key_len = 0;
            gd_u256 have, want;
            GD_TRY(gd_supply_key(key, &key_len, coins[k].denom));
            GD_TRY(gd_read_amount(ctx, &have, key, key_len));
            GD_TRY(gd_u256_parse(&want, coins[k].amount));
            if (gd_u256_cmp(&have, &want) != 0)
                return gd_fail(GD_ERR_PARSE, "bank.supply of %s is %s but the balances sum to "
                                             "another amount", coins[k].denom, coins[k].amount);
        }
    }
    return GD_OK;
}

typedef struct gd_bank_walk {
    json_t *array;
    char last_address[GD_ADDRESS_STR_MAX];
    json_t *last_coins;
    gd_status status;
} gd_bank_walk;

static int gd_bank_export_balance(void *p, const uint8_t *key, size_t key_len, const uint8_t *v,
                                  size_t vlen) {
    gd_bank_walk *w = p;
    size_t raw_len = key[2];
    char address[GD_ADDRESS_STR_MAX], denom[GD_DENOM_MAX + 1], amount[GD_U256_DEC_MAX + 1];
    if (3 + raw_len > key_len || key_len - 3 - raw_len > GD_DENOM_MAX || vlen > GD_U256_DEC_MAX ||
        gd_address_encode(address, sizeof address, GD_ADDRESS_PREFIX, key + 3, raw_len) != GD_OK) {
        w->status = gd_fail(GD_ERR_PARSE, "malformed balance key");
        return 1;
    }
    memcpy(denom, key + 3 + raw_len, key_len - 3 - raw_len);
    denom[key_len - 3 - raw_len] = '\0';
    memcpy(amount, v, vlen);
    amount[vlen] = '\0';
    if (w->last_coins == NULL || strcmp(address, w->last_address) != 0) {
        w->last_coins = json_array();
        json_array_append_new(w->array,
                              json_pack("{s:s,s:O}", "address", address, "coins", w->last_coins));
        json_decref(w->last_coins); /* the balance object holds it */
        snprintf(w->last_address, sizeof w->last_address, "%s", address);
    }
    json_array_append_new(w->last_coins, json_pack("{s:s,s:s}", "denom", denom, "amount", amount));
    return 0;
}

static int gd_bank_export_supply(void *p, const uint8_t *key, size_t key_len, const uint8_t *v,
                                 size_t vlen) {
    gd_bank_walk *w = p;
    char denom[GD_DENOM_MAX + 1], amount[GD_U256_DEC_MAX + 1];
    if (key_len - 2 > GD_DENOM_MAX || vlen > GD_U256_DEC_MAX) {
        w->status = gd_fail(GD_ERR_PARSE, "malformed supply entry");
        return 1;
    }
    memcpy(denom, key + 2, key_len - 2);
    denom[key_len - 2] = '\0';
    memcpy(amount, v, vlen);
    amount[vlen] = '\0';
    json_array_append_new(w->array, json_pack("{s:s,s:s}", "denom", denom, "amount", amount));
    return 0;
}

static json_t *gd_bank_export_genesis(gd_app *app, gd_ctx *ctx) {
    (void)app;
    gd_bank_walk balances = {.array = json_array()}, supply = {.array = json_array()};
    const uint8_t bpre[2] = {GD_BANK_PREFIX, GD_BANK_KEY_BALANCE};
    const uint8_t spre[2] = {GD_BANK_PREFIX, GD_BANK_KEY_SUPPLY};
    if (balances.array == NULL || supply.array == NULL ||
        gd_kv_iterate_prefix(ctx->kv, bpre, 2, gd_bank_export_balance, &balances) != GD_OK ||
        gd_kv_iterate_prefix(ctx->kv, spre, 2, gd_bank_export_supply, &supply) != GD_OK ||
        balances.status != GD_OK || supply.status != GD_OK) {
        json_decref(balances.array);
        json_decref(supply.array);
        return NULL;
    }
    return json_pack("{s:{s:b,s:[]},s:o,s:o,s:[],s:[]}", "params", "default_send_enabled", 1,
                     "send_enabled", "balances", balances.array, "supply", supply.array,
                     "denom_metadata", "send_enabled");
}

/* Invariant: per denom, the supply equals the sum of balances; every stored
 * balance is a positive canonical amount. */
typedef struct gd_bank_sum {
    char denoms[64][GD_DENOM_MAX + 1];
    gd_u256 totals[64];
    size_t n;
    gd_status status;
} gd_bank_sum;

static int gd_bank_sum_visit(void *p, const uint8_t *key, size_t key_len, const uint8_t *v,
                             size_t vlen) {
    gd_bank_sum *sum = p;
    size_t raw_len = key[2];
    char denom[GD_DENOM_MAX + 1], amount[GD_U256_DEC_MAX + 1];
    gd_u256 a;
    if (3 + raw_len > key_len || key_len - 3 - raw_len > GD_DENOM_MAX || vlen == 0 ||
        vlen > GD_U256_DEC_MAX) {
        sum->status = gd_fail(GD_ERR_PARSE, "invariant bank: malformed balance entry");
        return 1;
    }
    memcpy(denom, key + 3 + raw_len, key_len - 3 - raw_len);
    denom[key_len - 3 - raw_len] = '\0';
    memcpy(amount, v, vlen);
    amount[vlen] = '\0';
    if (gd_u256_parse(&a, amount) != GD_OK || gd_u256_is_zero(&a)) {
        sum->status = gd_fail(GD_ERR_PARSE, "invariant bank: stored balance '%s' is not a "
                                            "positive amount", amount);
        return 1;
    }
    size_t i = 0;
    while (i < sum->n && strcmp(sum->denoms[i], denom) != 0)
        i++;
    if (i == sum->n) {
        if (sum->n == 64) {
            sum->status = gd_fail(GD_ERR_LIMIT, "invariant bank: too many denoms to check");
            return 1;
        }
        strcpy(sum->denoms[sum->n], denom);
        gd_u256_from_u64(&sum->totals[sum->n], 0);
        sum->n++;
    }
    if (!gd_u256_add(&sum->totals[i], &sum->totals[i], &a)) {
        sum->status = gd_fail(GD_ERR_PARSE, "invariant bank: balances of %s overflow", denom);
        return 1;
    }
    return 0;
}

typedef struct gd_bank_supply_check {
    gd_bank_sum *sum;
    gd_status status;
} gd_bank_supply_check;

/* Every stored supply entry must be matched by balances (a denom whose
 * balances are all gone must not keep a supply). */
static int gd_bank_supply_visit(void *p, const uint8_t *key, size_t key_len, const uint8_t *v,
                                size_t vlen) {
    gd_bank_supply_check *c = p;
    (void)v;
    (void)vlen;
    for (size_t i = 0; i < c->sum->n; i++)
        if (strlen(c->sum->denoms[i]) == key_len - 2 &&
            memcmp(c->sum->denoms[i], key + 2, key_len - 2) == 0)
            return 0;
    c->status = gd_fail(GD_ERR_PARSE, "invariant bank: supply of %.*s without balances",
                        (int)(key_len - 2), (const char *)key + 2);
    return 1;
}

static gd_status gd_bank_invariants(gd_app *app, gd_kv *kv) {
    (void)app;
    gd_bank_sum *sum = calloc(1, sizeof *sum);
    if (sum == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    const uint8_t bpre[2] = {GD_BANK_PREFIX, GD_BANK_KEY_BALANCE};
    gd_status s = gd_kv_iterate_prefix(kv, bpre, 2, gd_bank_sum_visit, sum);
    if (s == GD_OK)
        s = sum->status;
    const uint8_t spre[2] = {GD_BANK_PREFIX, GD_BANK_KEY_SUPPLY};
    gd_bank_supply_check check = {sum, GD_OK};
    if (s == GD_OK)
        s = gd_kv_iterate_prefix(kv, spre, 2, gd_bank_supply_visit, &check);
    if (s == GD_OK)
        s = check.status;
    gd_gas_meter unmetered = {0, 0};
    gd_ctx ctx = {.kv = kv, .gas = &unmetered, .mode = GD_EXEC_QUERY};
    for (size_t i = 0; s == GD_OK && i < sum->n; i++) {
        uint8_t key[GD_BANK_KEY_MAX];
        size_t key_len = 0;
        gd_u256 supply;
        s = gd_supply_key(key, &key_len, sum->denoms[i]);
        if (s == GD_OK)
            s = gd_read_amount(&ctx, &supply, key, key_len);
        if (s == GD_OK && gd_u256_cmp(&supply, &sum->totals[i]) != 0) {
            char a[GD_U256_DEC_MAX + 1], b[GD_U256_DEC_MAX + 1];
            gd_u256_format(a, &supply);
            gd_u256_format(b, &sum->totals[i]);
            s = gd_fail(GD_ERR_PARSE, "invariant bank: supply of %s is %s but balances sum to %s",
                        sum->denoms[i], a, b);
        }
    }
    free(sum);
    return s;
}

static const gd_msg_route gd_bank_msgs[] = {
    {"/cosmos.bank.v1beta1.MsgSend", &cosmos__bank__v1beta1__msg_send__descriptor,
     gd_msg_send_validate, gd_msg_send_execute, GD_MSG_DECODE_PLAIN},
};

static const gd_query_route gd_bank_queries[] = {
    {"/cosmos.bank.v1beta1.Query/Balance", gd_bank_query_balance},
};

const gd_module gd_bank_module = {
    .name = "bank",
    .msgs = gd_bank_msgs,
    .n_msgs = sizeof gd_bank_msgs / sizeof gd_bank_msgs[0],
    .queries = gd_bank_queries,
    .n_queries = sizeof gd_bank_queries / sizeof gd_bank_queries[0],
    .init_genesis = gd_bank_init_genesis,
    .export_genesis = gd_bank_export_genesis,
    .check_invariants = gd_bank_invariants,
};
