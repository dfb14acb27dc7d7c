/* Test chain fixture (see app_fixture.h). */
#include "tests/support/app_fixture.h"

#include <protobuf-c/protobuf-c.h>

#include <stdio.h>
#include <string.h>

#include "chain/wire/coin.h"
#include "chain/wire/msg.h"
#include "chain/wire/query_answer.h"
#include "chain/wire/tx.h"
#include "common/hash.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "tests/support/testkit.h"

static void fix_init_state(app_fixture *f, int n, const char *min_gas_price,
                           const json_t *diloco_state, const gd_module *extra);

void fix_init(app_fixture *f, const char *min_gas_price) {
    fix_init_state(f, FIX_ACCOUNTS, min_gas_price, NULL, NULL);
}

void fix_init_diloco(app_fixture *f, const json_t *diloco_state) {
    fix_init_state(f, FIX_ACCOUNTS, NULL, diloco_state, NULL);
}

void fix_init_accounts(app_fixture *f, int n, const json_t *diloco_state) {
    fix_init_state(f, n, NULL, diloco_state, NULL);
}

void fix_init_with(app_fixture *f, const gd_module *extra) {
    fix_init_state(f, FIX_ACCOUNTS, NULL, NULL, extra);
}

static void fix_init_state(app_fixture *f, int n, const char *min_gas_price,
                           const json_t *diloco_state, const gd_module *extra) {
    memset(f, 0, sizeof *f);
    if (n < 1 || n > FIX_ACCOUNTS_MAX)
        abort();
    f->n_accounts = n;
    json_t *accounts = json_array(), *balances = json_array();
    for (int i = 0; i < n; i++) {
        uint8_t secret[32];
        memset(secret, 0x11 * (i + 1), sizeof secret);
        if (i >= 8) { /* 0xff.. is past the curve order: hashed secrets for the rest */
            char text[32];
            snprintf(text, sizeof text, "fixture account %d", i);
            gd_sha256(secret, text, strlen(text));
        }
        if (gd_key_from_secret(&f->keys[i], secret) != GD_OK ||
            gd_address_from_pubkey(f->addr[i], sizeof f->addr[i], "gonka", f->keys[i].pubkey) !=
                GD_OK)
            abort();
        char num[12];
        snprintf(num, sizeof num, "%d", i);
        json_array_append_new(accounts, json_pack("{s:s,s:s,s:s,s:s}", "@type",
                                                  "/cosmos.auth.v1beta1.BaseAccount", "address",
                                                  f->addr[i], "account_number", num, "sequence",
                                                  "0"));
        json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", f->addr[i],
                                                  "coins", "denom", "ngonka", "amount", "1000000"));
    }
    f->genesis = json_pack("{s:s,s:s,s:s,s:{s:{s:o},s:{s:o},s:{}}}", "chain_id", FIX_CHAIN,
                           "initial_height", "1", "genesis_time", "2026-01-01T00:00:00Z",
                           "app_state", "auth", "accounts", accounts, "bank", "balances",
                           balances, "inference");
    if (diloco_state != NULL)
        json_object_set(json_object_get(f->genesis, "app_state"), "diloco",
                        (json_t *)diloco_state);
    gd_app_config cfg = {0};
    if (min_gas_price)
        snprintf(cfg.min_gas_price, sizeof cfg.min_gas_price, "%s", min_gas_price);
    if (gd_app_new(&f->app, &cfg) != GD_OK || gd_app_register_standard(f->app) != GD_OK ||
        (extra != NULL && gd_app_register(f->app, extra) != GD_OK)) {
        fprintf(stderr, "fixture: %s\n", gd_error_detail());
        abort();
    }
    CHECK_OK(gd_app_init_chain(f->app, f->genesis));
    f->height = 0;
}

void fix_free(app_fixture *f) {
    gd_app_free(f->app);
    json_decref(f->genesis);
    gd_events_free(&f->events);
}

gd_status fix_send_tx(app_fixture *f, gd_buf *out, int from, const char *to,
                      const char *amount, const char *fees, uint64_t gas, uint64_t sequence,
                      const char *chain_id) {
    gd_coin coins[4], fee[4];
    size_t n = 0, nf = 0;
    GD_TRY(gd_coins_parse(coins, 4, &n, amount, 1));
    if (fees)
        GD_TRY(gd_coins_parse(fee, 4, &nf, fees, 0));
    gd_any msg = {0};
    GD_TRY(gd_msg_send(&msg, f->addr[from], to, coins, n));
    gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .fees = fee, .n_fees = nf,
                         .gas_limit = gas, .chain_id = chain_id ? chain_id : FIX_CHAIN,
                         .account_number = (uint64_t)from, .sequence = sequence};
    gd_signed_tx tx = {0};
    gd_status s = gd_tx_sign(&tx, &f->keys[from], &req);
    gd_any_free(&msg);
    if (s == GD_OK)
        *out = tx.raw;
    return s;
}

gd_status fix_anys_tx(app_fixture *f, gd_buf *out, int from, size_t n, const gd_any *msgs) {
    if (n == 0 || n > FIX_TX_MSGS_MAX)
        return gd_fail(GD_ERR_INVALID, "1..%d messages per test transaction", FIX_TX_MSGS_MAX);
    gd_tx_request req = {.msgs = msgs, .n_msgs = n, .gas_limit = 20000000,
                         .chain_id = FIX_CHAIN, .account_number = (uint64_t)from,
                         .sequence = fix_sequence(f, from)};
    gd_signed_tx tx = {0};
    gd_status s = gd_tx_sign(&tx, &f->keys[from], &req);
    if (s == GD_OK)
        *out = tx.raw;
    return s;
}

gd_status fix_msgs_tx(app_fixture *f, int from, size_t n, const char *const *type_urls,
                      const void *const *msgs, gd_buf *out) {
    gd_any any[FIX_TX_MSGS_MAX];
    if (n == 0 || n > FIX_TX_MSGS_MAX)
        return gd_fail(GD_ERR_INVALID, "1..%d messages per test transaction", FIX_TX_MSGS_MAX);
    memset(any, 0, sizeof any);
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        snprintf(any[i].type_url, sizeof any[i].type_url, "%s", type_urls[i]);
        size_t len = protobuf_c_message_get_packed_size(msgs[i]);
        s = gd_buf_reserve(&any[i].value, len + 1);
        if (s == GD_OK)
            any[i].value.len = protobuf_c_message_pack(msgs[i], any[i].value.data);
    }
    if (s == GD_OK)
        s = fix_anys_tx(f, out, from, n, any);
    for (size_t i = 0; i < n; i++)
        gd_any_free(&any[i]);
    return s;
}

gd_status fix_msg_tx(app_fixture *f, gd_buf *out, int from, const char *type_url,
                     const void *msg) {
    return fix_msgs_tx(f, from, 1, &type_url, &msg, out);
}

uint64_t fix_sequence(app_fixture *f, int i) {
    Cosmos__Auth__V1beta1__QueryAccountInfoRequest req =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_REQUEST__INIT;
    req.address = f->addr[i];
    uint8_t buf[128];
    size_t n = cosmos__auth__v1beta1__query_account_info_request__pack(&req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    gd_account_info info = {0};
    if (gd_app_query(f->app, "/cosmos.auth.v1beta1.Query/AccountInfo", buf, n, &resp, &err) !=
            GD_OK ||
        err.code != 0 || gd_decode_account_info(&info, resp.data, resp.len) != GD_OK)
        CHECK(0);
    gd_buf_free(&resp);
    return info.sequence;
}

void fix_block(app_fixture *f, const gd_buf *txs, size_t n, gd_tx_outcome *outcomes) {
    uint64_t before[FIX_ACCOUNTS_MAX];
    for (int i = 0; i < f->n_accounts; i++)
        before[i] = fix_sequence(f, i);
    uint8_t block_hash[32], app_hash[32];
    int64_t h = f->height + 1;
    if (f->hash_salt != 0 && h >= f->hash_salt_from) {
        uint8_t text[12];
        memcpy(text, &h, sizeof h);
        for (int i = 0; i < 4; i++)
            text[8 + i] = (uint8_t)(f->hash_salt >> (8 * i));
        gd_sha256(block_hash, text, sizeof text);
    } else {
        gd_sha256(block_hash, &h, sizeof h);
    }
    gd_events_free(&f->events);
    CHECK_OK(gd_app_begin_block(f->app, h, block_hash, &f->events));
    for (size_t i = 0; i < n; i++)
        CHECK_OK(gd_app_deliver_tx(f->app, &outcomes[i], txs[i].data, txs[i].len));
    CHECK_OK(gd_app_end_block(f->app, &f->events));
    CHECK_OK(gd_app_commit(f->app, app_hash));
    f->height = h;
    CHECK(gd_app_height(f->app) == h);
    CHECK_OK(gd_app_check_invariants(f->app));
    for (int i = 0; i < f->n_accounts; i++)
        CHECK(fix_sequence(f, i) >= before[i]);
}

const char *fix_balance(app_fixture *f, const char *address) {
    static char amount[96];
    Cosmos__Bank__V1beta1__QueryBalanceRequest req =
        COSMOS__BANK__V1BETA1__QUERY_BALANCE_REQUEST__INIT;
    req.address = (char *)address;
    req.denom = "ngonka";
    uint8_t buf[256];
    size_t n = cosmos__bank__v1beta1__query_balance_request__pack(&req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    gd_coin c = {0};
    if (gd_app_query(f->app, "/cosmos.bank.v1beta1.Query/Balance", buf, n, &resp, &err) !=
            GD_OK ||
        err.code != 0 || gd_decode_balance(&c, resp.data, resp.len) != GD_OK)
        CHECK(0);
    gd_buf_free(&resp);
    snprintf(amount, sizeof amount, "%s", c.amount);
    return amount;
}
