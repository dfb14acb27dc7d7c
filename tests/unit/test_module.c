/* The chain's state machine (chain/module): genesis, MsgSend, the ante
 * checks, fees, gas, queries, the epoch module, export/import determinism.
 * Every block checks the invariants (supply equals balances, account
 * numbers below the next number) and that sequences never go down. */
#include <stdlib.h>

#include "chain/module/auth.h"
#include "chain/module/u256.h"
#include "chain/wire/msg.h"
#include "chain/wire/query_answer.h"
#include "chain/wire/tx.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/tx.pb-c.h"
#include "cosmos/base/abci/v1beta1/abci.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "tests/support/app_fixture.h"
#include "tests/support/testkit.h"

static bool has_attr(const gd_events *ev, const char *type, const char *key, const char *value) {
    for (size_t i = 0; i < ev->n; i++) {
        if (strcmp(ev->items[i].type, type) != 0)
            continue;
        for (size_t k = 0; k < ev->items[i].n_attrs; k++)
            if (strcmp(ev->items[i].attrs[k].key, key) == 0 &&
                (value == NULL || strcmp(ev->items[i].attrs[k].value, value) == 0))
                return true;
    }
    return false;
}

static void run_one(app_fixture *f, gd_tx_outcome *out, const gd_buf *tx) {
    fix_block(f, tx, 1, out);
}

static void test_genesis(void) {
    app_fixture f;
    fix_init(&f, NULL);
    for (int i = 0; i < FIX_ACCOUNTS; i++)
        CHECK_STR_EQ(fix_balance(&f, f.addr[i]), "1000000");
    CHECK(fix_sequence(&f, 0) == 0);
    /* The fee collector exists as a module account: Account answers an Any. */
    char collector[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address(collector, sizeof collector, "fee_collector"));
    Cosmos__Auth__V1beta1__QueryAccountRequest req = COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_REQUEST__INIT;
    req.address = collector;
    uint8_t buf[128];
    size_t n = cosmos__auth__v1beta1__query_account_request__pack(&req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    CHECK_OK(gd_app_query(f.app, "/cosmos.auth.v1beta1.Query/Account", buf, n, &resp, &err));
    CHECK(err.code == 0);
    Cosmos__Auth__V1beta1__QueryAccountResponse *r =
        cosmos__auth__v1beta1__query_account_response__unpack(NULL, resp.len, resp.data);
    CHECK(r && r->account);
    if (r && r->account)
        CHECK_STR_EQ(r->account->type_url, "/cosmos.auth.v1beta1.ModuleAccount");
    if (r)
        cosmos__auth__v1beta1__query_account_response__free_unpacked(r, NULL);
    gd_buf_free(&resp);
    /* EpochInfo answers with the localnet parameters. */
    gd_epoch_info info;
    CHECK_OK(gd_app_query(f.app, "/inference.inference.Query/EpochInfo", NULL, 0, &resp, &err));
    CHECK_OK(gd_decode_epoch_info(&info, resp.data, resp.len));
    CHECK(info.params.epoch_length == 100 && info.epoch.index == 0 && info.block_height == 0);
    gd_buf_free(&resp);
    fix_free(&f);
}

static void test_send(void) {
    app_fixture f;
    fix_init(&f, NULL);
    gd_buf tx = {0};
    gd_tx_outcome out;
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "500ngonka", NULL, 200000, 0, NULL));
    run_one(&f, &out, &tx);
    CHECK(out.err.code == 0);
    CHECK(out.gas_used > 0 && out.gas_used < out.gas_wanted && out.gas_wanted == 200000);
    CHECK_STR_EQ(fix_balance(&f, f.addr[0]), "999500");
    CHECK_STR_EQ(fix_balance(&f, f.addr[1]), "1000500");
    CHECK(fix_sequence(&f, 0) == 1);
    CHECK(has_attr(&out.events, "transfer", "amount", "500ngonka"));
    CHECK(has_attr(&out.events, "transfer", "recipient", f.addr[1]));
    CHECK(has_attr(&out.events, "coin_spent", "spender", f.addr[0]));
    CHECK(has_attr(&out.events, "message", "action", "/cosmos.bank.v1beta1.MsgSend"));
    CHECK(has_attr(&out.events, "message", "msg_index", "0"));
    CHECK(has_attr(&out.events, "tx", "acc_seq", NULL));
    /* The result data is TxMsgData with a MsgSendResponse. */
    Cosmos__Base__Abci__V1beta1__TxMsgData *d =
        cosmos__base__abci__v1beta1__tx_msg_data__unpack(NULL, out.data.len, out.data.data);
    CHECK(d && d->n_msg_responses == 1);
    if (d && d->n_msg_responses == 1)
        CHECK_STR_EQ(d->msg_responses[0]->type_url, "/cosmos.bank.v1beta1.MsgSendResponse");
    if (d)
        cosmos__base__abci__v1beta1__tx_msg_data__free_unpacked(d, NULL);
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);

    /* To a fresh address: the account is created and funded. */
    const char *fresh = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc";
    CHECK_OK(fix_send_tx(&f, &tx, 0, fresh, "7ngonka", NULL, 200000, 1, NULL));
    run_one(&f, &out, &tx);
    CHECK(out.err.code == 0);
    CHECK_STR_EQ(fix_balance(&f, fresh), "7");
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);
    fix_free(&f);
}

static void test_failures_in_block(void) {
    app_fixture f;
    fix_init(&f, NULL);
    gd_buf tx = {0};
    gd_tx_outcome out;
    /* More than the balance: code 5 in the block, yet the sequence moves
     * (the ante's state stands when a message fails, as in the SDK). */
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "2000000ngonka", NULL, 200000, 0, NULL));
    run_one(&f, &out, &tx);
    CHECK(out.err.code == 5 && strcmp(out.err.codespace, "sdk") == 0);
    CHECK(strstr(out.err.log, "insufficient funds") && strstr(out.err.log, "message index: 0"));
    CHECK_STR_EQ(fix_balance(&f, f.addr[0]), "1000000");
    CHECK(fix_sequence(&f, 0) == 1);
    CHECK(out.data.len == 0);
    gd_tx_outcome_free(&out);
    /* Replaying the same bytes: code 32 with the SDK's message. */
    run_one(&f, &out, &tx);
    CHECK(out.err.code == 32);
    CHECK_STR_EQ(out.err.log, "account sequence mismatch, expected 1, got 0: incorrect account "
                              "sequence");
    CHECK(out.events.n == 0); /* a failed ante leaves no events */
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);
    /* A module account cannot receive through MsgSend. */
    char collector[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address(collector, sizeof collector, "fee_collector"));
    CHECK_OK(fix_send_tx(&f, &tx, 0, collector, "1ngonka", NULL, 200000, 1, NULL));
    run_one(&f, &out, &tx);
    CHECK(out.err.code == 4 && strstr(out.err.log, "not allowed to receive funds"));
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);
    fix_free(&f);
}

static void test_ante_refusals(void) {
    app_fixture f;
    fix_init(&f, NULL);
    struct {
        const char *name;
        const char *chain;
        uint64_t gas;
        uint64_t seq;
        int from;
        uint32_t code;
    } cases[] = {
        {"wrong chain-id", "other-chain", 200000, 0, 0, 4},
        {"wrong sequence", NULL, 200000, 5, 0, 32},
        {"out of gas", NULL, 1000, 0, 0, 11},
        {"zero gas", NULL, 0, 0, 0, 11},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gd_buf tx = {0};
        gd_tx_outcome out;
        gd_status s = fix_send_tx(&f, &tx, cases[i].from, f.addr[2], "1ngonka", NULL,
                                  cases[i].gas, cases[i].seq, cases[i].chain);
        if (cases[i].gas == 0) {
            /* The builder refuses zero gas; craft it from a valid tx instead. */
            CHECK_STATUS(s, GD_ERR_INVALID);
            continue;
        }
        CHECK_OK(s);
        CHECK_OK(gd_app_check_tx(f.app, &out, tx.data, tx.len));
        if (out.err.code != cases[i].code)
            fprintf(stderr, "%s: code %u: %s\n", cases[i].name, out.err.code, out.err.log);
        CHECK(out.err.code == cases[i].code);
        gd_tx_outcome_free(&out);
        gd_buf_free(&tx);
    }
    /* Wrong account number: account 1's key claiming account number 0 is
     * the same as a wrong signature for the chain's number. */
    gd_buf tx = {0};
    gd_tx_outcome out;
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "1ngonka", NULL, 200000, 0, NULL));
    tx.data[tx.len - 1] ^= 1; /* corrupt the signature */
    CHECK_OK(gd_app_check_tx(f.app, &out, tx.data, tx.len));
    CHECK(out.err.code == 4 && strstr(out.err.log, "signature verification failed"));
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);
    /* Garbage and an unknown message type: code 2. */
    const uint8_t junk[] = {0x0a, 0x03, 0x01, 0x02};
    CHECK_OK(gd_app_check_tx(f.app, &out, junk, sizeof junk));
    CHECK(out.err.code == 2);
    gd_tx_outcome_free(&out);
    gd_any odd = {0};
    snprintf(odd.type_url, sizeof odd.type_url, "/cosmos.staking.v1beta1.MsgDelegate");
    gd_tx_request req = {.msgs = &odd, .n_msgs = 1, .gas_limit = 200000, .chain_id = FIX_CHAIN};
    gd_signed_tx st = {0};
    CHECK_OK(gd_tx_sign(&st, &f.keys[0], &req));
    CHECK_OK(gd_app_check_tx(f.app, &out, st.raw.data, st.raw.len));
    CHECK(out.err.code == 2 && strstr(out.err.log, "unable to resolve type URL"));
    gd_tx_outcome_free(&out);
    gd_signed_tx_free(&st);
    /* Memo too long, timeout height passed. */
    gd_any msg = {0};
    gd_coin c = {"ngonka", "1"};
    CHECK_OK(gd_msg_send(&msg, f.addr[0], f.addr[1], &c, 1));
    char memo[300];
    memset(memo, 'm', sizeof memo - 1);
    memo[sizeof memo - 1] = '\0';
    req = (gd_tx_request){.msgs = &msg, .n_msgs = 1, .gas_limit = 200000, .chain_id = FIX_CHAIN,
                          .memo = memo};
    CHECK_OK(gd_tx_sign(&st, &f.keys[0], &req));
    CHECK_OK(gd_app_check_tx(f.app, &out, st.raw.data, st.raw.len));
    CHECK(out.err.code == 12);
    gd_tx_outcome_free(&out);
    gd_signed_tx_free(&st);
    /* A memo that is not UTF-8 (the client never signs one: its bytes are
     * changed after signing): code 2, the SDK's tx decode error, before
     * the signature is even looked at. */
    req.memo = "memo-QQQQ";
    CHECK_OK(gd_tx_sign(&st, &f.keys[0], &req));
    uint8_t *q = NULL;
    for (size_t i = 0; i + 4 <= st.raw.len && q == NULL; i++)
        if (memcmp(st.raw.data + i, "QQQQ", 4) == 0)
            q = st.raw.data + i;
    CHECK(q != NULL);
    if (q != NULL)
        memcpy(q, "\xff\xfe\xc0\x80", 4);
    CHECK_OK(gd_app_check_tx(f.app, &out, st.raw.data, st.raw.len));
    CHECK(out.err.code == 2 && strstr(out.err.log, "TxBody.memo is not valid UTF-8"));
    gd_tx_outcome_free(&out);
    /* The same bytes put straight into a block (a proposer that skips
     * CheckTx) fail there too: nothing is transferred, no fee is taken. */
    char before[64];
    snprintf(before, sizeof before, "%s", fix_balance(&f, f.addr[0]));
    gd_buf bad_tx = {.data = st.raw.data, .len = st.raw.len};
    gd_tx_outcome in_block;
    fix_block(&f, &bad_tx, 1, &in_block);
    CHECK(in_block.err.code == 2 && strstr(in_block.err.log, "not valid UTF-8"));
    CHECK_STR_EQ(fix_balance(&f, f.addr[0]), before);
    gd_tx_outcome_free(&in_block);
    gd_signed_tx_free(&st);
    fix_block(&f, NULL, 0, NULL);
    fix_block(&f, NULL, 0, NULL);
    req.memo = NULL;
    req.timeout_height = 1;
    CHECK_OK(gd_tx_sign(&st, &f.keys[0], &req));
    CHECK_OK(gd_app_check_tx(f.app, &out, st.raw.data, st.raw.len));
    CHECK(out.err.code == 30);
    gd_tx_outcome_free(&out);
    gd_signed_tx_free(&st);
    gd_any_free(&msg);
    /* An account that does not exist cannot sign. */
    gd_key stranger;
    uint8_t secret[32];
    memset(secret, 0xa5, sizeof secret); /* no fixture account uses it */
    CHECK_OK(gd_key_from_secret(&stranger, secret));
    char saddr[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_address_from_pubkey(saddr, sizeof saddr, "gonka", stranger.pubkey));
    CHECK_OK(gd_msg_send(&msg, saddr, f.addr[0], &c, 1));
    req = (gd_tx_request){.msgs = &msg, .n_msgs = 1, .gas_limit = 200000, .chain_id = FIX_CHAIN};
    CHECK_OK(gd_tx_sign(&st, &stranger, &req));
    CHECK_OK(gd_app_check_tx(f.app, &out, st.raw.data, st.raw.len));
    CHECK(out.err.code == 9);
    gd_tx_outcome_free(&out);
    gd_signed_tx_free(&st);
    gd_any_free(&msg);
    /* Someone else's message in my transaction: the public key does not
     * match the message's signer. */
    CHECK_OK(gd_msg_send(&msg, f.addr[1], f.addr[0], &c, 1));
    req = (gd_tx_request){.msgs = &msg, .n_msgs = 1, .gas_limit = 200000, .chain_id = FIX_CHAIN};
    CHECK_OK(gd_tx_sign(&st, &f.keys[0], &req));
    CHECK_OK(gd_app_check_tx(f.app, &out, st.raw.data, st.raw.len));
    CHECK(out.err.code == 8);
    gd_tx_outcome_free(&out);
    gd_signed_tx_free(&st);
    gd_any_free(&msg);
    fix_free(&f);
}

/* CheckTx keeps a check state: the next sequence is admitted before the
 * block, a repeated one is not; commit resets it. */
static void test_check_state(void) {
    app_fixture f;
    fix_init(&f, NULL);
    gd_buf t0 = {0}, t1 = {0}, t0b = {0};
    gd_tx_outcome o;
    CHECK_OK(fix_send_tx(&f, &t0, 0, f.addr[1], "1ngonka", NULL, 200000, 0, NULL));
    CHECK_OK(fix_send_tx(&f, &t1, 0, f.addr[1], "2ngonka", NULL, 200000, 1, NULL));
    CHECK_OK(fix_send_tx(&f, &t0b, 0, f.addr[1], "3ngonka", NULL, 200000, 0, NULL));
    CHECK_OK(gd_app_check_tx(f.app, &o, t0.data, t0.len));
    CHECK(o.err.code == 0);
    gd_tx_outcome_free(&o);
    CHECK_OK(gd_app_check_tx(f.app, &o, t1.data, t1.len));
    CHECK(o.err.code == 0);
    gd_tx_outcome_free(&o);
    CHECK_OK(gd_app_check_tx(f.app, &o, t0b.data, t0b.len));
    CHECK(o.err.code == 32);
    gd_tx_outcome_free(&o);
    gd_buf txs[2] = {t0, t1};
    gd_tx_outcome outs[2];
    fix_block(&f, txs, 2, outs);
    CHECK(outs[0].err.code == 0 && outs[1].err.code == 0);
    CHECK_STR_EQ(fix_balance(&f, f.addr[1]), "1000003");
    gd_tx_outcome_free(&outs[0]);
    gd_tx_outcome_free(&outs[1]);
    CHECK_OK(gd_app_check_tx(f.app, &o, t1.data, t1.len));
    CHECK(o.err.code == 32); /* committed already */
    gd_tx_outcome_free(&o);
    gd_buf_free(&t0);
    gd_buf_free(&t1);
    gd_buf_free(&t0b);
    fix_free(&f);
}

static void test_fees(void) {
    app_fixture f;
    fix_init(&f, "0.01ngonka");
    gd_buf tx = {0};
    gd_tx_outcome o;
    /* 200000 gas at 0.01 needs 2000ngonka. */
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "1ngonka", "1000ngonka", 200000, 0, NULL));
    CHECK_OK(gd_app_check_tx(f.app, &o, tx.data, tx.len));
    CHECK(o.err.code == 13 && strstr(o.err.log, "required: 2000ngonka"));
    gd_tx_outcome_free(&o);
    gd_buf_free(&tx);
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "1ngonka", NULL, 200000, 0, NULL));
    CHECK_OK(gd_app_check_tx(f.app, &o, tx.data, tx.len));
    CHECK(o.err.code == 13);
    gd_tx_outcome_free(&o);
    gd_buf_free(&tx);
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "1ngonka", "2000ngonka", 200000, 0, NULL));
    CHECK_OK(gd_app_check_tx(f.app, &o, tx.data, tx.len));
    CHECK(o.err.code == 0);
    gd_tx_outcome_free(&o);
    run_one(&f, &o, &tx);
    CHECK(o.err.code == 0 && has_attr(&o.events, "tx", "fee", "2000ngonka"));
    CHECK_STR_EQ(fix_balance(&f, f.addr[0]), "997999");
    char collector[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address(collector, sizeof collector, "fee_collector"));
    CHECK_STR_EQ(fix_balance(&f, collector), "2000");
    gd_tx_outcome_free(&o);
    gd_buf_free(&tx);
    /* A fee above the balance: code 5. */
    CHECK_OK(fix_send_tx(&f, &tx, 2, f.addr[1], "1ngonka", "2000000ngonka", 200000, 0, NULL));
    CHECK_OK(gd_app_check_tx(f.app, &o, tx.data, tx.len));
    CHECK(o.err.code == 5);
    gd_tx_outcome_free(&o);
    gd_buf_free(&tx);
    fix_free(&f);
    gd_app *bad = NULL;
    gd_app_config cfg = {0};
    snprintf(cfg.min_gas_price, sizeof cfg.min_gas_price, "x");
    CHECK_STATUS(gd_app_new(&bad, &cfg), GD_ERR_INVALID);
    snprintf(cfg.min_gas_price, sizeof cfg.min_gas_price, "0.0000000000000000001ngonka");
    CHECK_STATUS(gd_app_new(&bad, &cfg), GD_ERR_INVALID);
}

/* localnet's default minimum (GD_GAS_PRICE_DEFAULT): 200000 gas needs
 * ceil(200000 x 0.0025) = 500ngonka; a zero minimum ("0", "0ngonka")
 * takes a transaction without a fee. */
static void test_default_min_gas_price(void) {
    app_fixture f;
    fix_init(&f, GD_GAS_PRICE_DEFAULT);
    gd_buf tx = {0};
    gd_tx_outcome o;
    const struct {
        const char *fee;
        uint64_t gas;
        uint32_t code;
        const char *log;
    } cases[] = {
        {NULL, 200000, 13, "insufficient fees; got: 0 required: 500ngonka"},
        {"499ngonka", 200000, 13, "insufficient fees; got: 499ngonka required: 500ngonka"},
        {"500stake", 200000, 13, "got: 500stake required: 500ngonka"},
        {"500ngonka", 200001, 13, "required: 501ngonka"},
        {"7499ngonka", 3000000, 13, "required: 7500ngonka"},
        {"500ngonka", 200000, 0, ""},
        {"7500ngonka", 3000000, 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "1ngonka", cases[i].fee, cases[i].gas, 0,
                             NULL));
        CHECK_OK(gd_app_check_tx(f.app, &o, tx.data, tx.len));
        bool ok = o.err.code == cases[i].code && strstr(o.err.log, cases[i].log) &&
                  (cases[i].code == 0 || strcmp(o.err.codespace, "sdk") == 0);
        if (!ok)
            fprintf(stderr, "case %zu: code %u log '%s'\n", i, o.err.code, o.err.log);
        CHECK(ok);
        gd_tx_outcome_free(&o);
        gd_buf_free(&tx);
        if (cases[i].code == 0) { /* the check state moved on: reset it */
            fix_free(&f);
            fix_init(&f, GD_GAS_PRICE_DEFAULT);
        }
    }
    fix_free(&f);
    const char *zero[] = {"0", "0ngonka", "0.0ngonka", ""};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) {
        fix_init(&f, zero[i]);
        CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "1ngonka", NULL, 200000, 0, NULL));
        CHECK_OK(gd_app_check_tx(f.app, &o, tx.data, tx.len));
        CHECK(o.err.code == 0);
        gd_tx_outcome_free(&o);
        gd_buf_free(&tx);
        fix_free(&f);
    }
}

static void test_simulate(void) {
    app_fixture f;
    fix_init(&f, NULL);
    gd_buf tx = {0};
    gd_tx_outcome sim, real;
    CHECK_OK(fix_send_tx(&f, &tx, 0, f.addr[1], "5ngonka", NULL, 200000, 0, NULL));
    CHECK_OK(gd_app_simulate(f.app, &sim, tx.data, tx.len));
    CHECK(sim.err.code == 0 && sim.gas_used > 0);
    CHECK_STR_EQ(fix_balance(&f, f.addr[1]), "1000000"); /* nothing changed */
    run_one(&f, &real, &tx);
    CHECK(real.gas_used == sim.gas_used);
    /* Through the query path, as --gas auto uses it. */
    gd_buf tx2 = {0};
    CHECK_OK(fix_send_tx(&f, &tx2, 0, f.addr[1], "5ngonka", NULL, 200000, 1, NULL));
    Cosmos__Tx__V1beta1__SimulateRequest req = COSMOS__TX__V1BETA1__SIMULATE_REQUEST__INIT;
    req.tx_bytes.data = tx2.data;
    req.tx_bytes.len = tx2.len;
    uint8_t buf[1024];
    size_t n = cosmos__tx__v1beta1__simulate_request__pack(&req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    CHECK_OK(gd_app_query(f.app, "/cosmos.tx.v1beta1.Service/Simulate", buf, n, &resp, &err));
    uint64_t gas = 0;
    CHECK(err.code == 0);
    CHECK_OK(gd_decode_simulate(resp.data, resp.len, &gas));
    gd_tx_outcome sim2;
    CHECK_OK(gd_app_simulate(f.app, &sim2, tx2.data, tx2.len));
    CHECK(gas == sim2.gas_used && gas > 0);
    gd_tx_outcome_free(&sim2);
    gd_buf_free(&resp);
    gd_tx_outcome_free(&sim);
    gd_tx_outcome_free(&real);
    gd_buf_free(&tx);
    gd_buf_free(&tx2);
    fix_free(&f);
}

static void test_query_errors(void) {
    app_fixture f;
    fix_init(&f, NULL);
    gd_buf resp = {0};
    gd_abci_error err;
    CHECK_OK(gd_app_query(f.app, "/nope.Query/Nothing", NULL, 0, &resp, &err));
    CHECK(err.code == 6);
    Cosmos__Auth__V1beta1__QueryAccountInfoRequest req =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_REQUEST__INIT;
    req.address = "gonka1notanaddress";
    uint8_t buf[128];
    size_t n = cosmos__auth__v1beta1__query_account_info_request__pack(&req, buf);
    CHECK_OK(gd_app_query(f.app, "/cosmos.auth.v1beta1.Query/AccountInfo", buf, n, &resp, &err));
    CHECK(err.code == 18);
    req.address = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc";
    n = cosmos__auth__v1beta1__query_account_info_request__pack(&req, buf);
    CHECK_OK(gd_app_query(f.app, "/cosmos.auth.v1beta1.Query/AccountInfo", buf, n, &resp, &err));
    CHECK(err.code == 22 && strstr(err.log, "not found"));
    const uint8_t junk[] = {0x0a};
    CHECK_OK(gd_app_query(f.app, "/cosmos.bank.v1beta1.Query/Balance", junk, 1, &resp, &err));
    CHECK(err.code == 18);
    gd_buf_free(&resp);
    fix_free(&f);
}

static void test_epochs(void) {
    app_fixture f;
    fix_init(&f, NULL);
    /* Localnet epochs: length 100, shift 80, so epoch 1's PoC starts at 20. */
    gd_buf resp = {0};
    gd_abci_error err;
    gd_epoch_info info;
    while (f.height < 19)
        fix_block(&f, NULL, 0, NULL);
    CHECK_OK(gd_app_query(f.app, "/inference.inference.Query/EpochInfo", NULL, 0, &resp, &err));
    CHECK_OK(gd_decode_epoch_info(&info, resp.data, resp.len));
    CHECK(info.epoch.index == 0 && info.block_height == 19);
    fix_block(&f, NULL, 0, NULL);
    CHECK_OK(gd_app_query(f.app, "/inference.inference.Query/EpochInfo", NULL, 0, &resp, &err));
    CHECK_OK(gd_decode_epoch_info(&info, resp.data, resp.len));
    CHECK(info.epoch.index == 1 && info.epoch.poc_start_block_height == 20);
    while (f.height < 120)
        fix_block(&f, NULL, 0, NULL);
    CHECK_OK(gd_app_query(f.app, "/inference.inference.Query/EpochInfo", NULL, 0, &resp, &err));
    CHECK_OK(gd_decode_epoch_info(&info, resp.data, resp.len));
    CHECK(info.epoch.index == 2 && info.epoch.poc_start_block_height == 120);
    gd_buf_free(&resp);
    fix_free(&f);
}

/* The same genesis and transactions give the same app hash; exporting the
 * state and starting a new chain from it gives the same app hash too. */
static void test_determinism_and_export(void) {
    uint8_t hashes[2][32];
    json_t *exported = NULL;
    int64_t height = 0;
    for (int run = 0; run < 2; run++) {
        app_fixture f;
        fix_init(&f, NULL);
        for (int b = 0; b < 5; b++) {
            gd_buf txs[3];
            gd_tx_outcome outs[3];
            for (int i = 0; i < 3; i++)
                CHECK_OK(fix_send_tx(&f, &txs[i], i, f.addr[(i + b) % FIX_ACCOUNTS], "3ngonka",
                                     NULL, 200000, (uint64_t)b, NULL));
            fix_block(&f, txs, 3, outs);
            for (int i = 0; i < 3; i++) {
                gd_tx_outcome_free(&outs[i]);
                gd_buf_free(&txs[i]);
            }
        }
        gd_app_hash(f.app, hashes[run]);
        if (run == 0) {
            exported = gd_app_export(f.app);
            height = gd_app_height(f.app);
        }
        fix_free(&f);
    }
    CHECK(memcmp(hashes[0], hashes[1], 32) == 0);
    CHECK(exported != NULL);
    char initial[24];
    snprintf(initial, sizeof initial, "%lld", (long long)(height + 1));
    json_t *genesis = json_pack("{s:s,s:s,s:O}", "chain_id", FIX_CHAIN, "initial_height", initial,
                                "app_state", exported);
    gd_app *again = NULL;
    CHECK_OK(gd_app_new(&again, NULL));
    CHECK_OK(gd_app_register_standard(again));
    CHECK_OK(gd_app_init_chain(again, genesis));
    uint8_t h[32];
    gd_app_hash(again, h);
    CHECK(memcmp(h, hashes[0], 32) == 0);
    CHECK(gd_app_height(again) == height);
    /* And the re-exported state is identical. */
    json_t *exported2 = gd_app_export(again);
    CHECK(json_equal(exported, exported2));
    json_decref(exported2);
    gd_app_free(again);
    json_decref(genesis);
    json_decref(exported);
}

static void test_genesis_errors(void) {
    const char *bad[] = {
        "{}",
        "{\"chain_id\":\"\"}",
        "{\"chain_id\":\"c\",\"initial_height\":\"0\"}",
        "{\"chain_id\":\"c\",\"app_state\":{\"staking\":{}}}",
        "{\"chain_id\":\"c\",\"app_state\":{\"auth\":{\"accounts\":[{\"@type\":"
        "\"/cosmos.auth.v1beta1.BaseAccount\",\"address\":\"gonka1bad\"}]}}}",
        "{\"chain_id\":\"c\",\"app_state\":{\"auth\":{\"accounts\":[{\"@type\":"
        "\"/cosmos.auth.v1beta1.BaseAccount\",\"address\":"
        "\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\",\"typo\":1}]}}}",
        "{\"chain_id\":\"c\",\"app_state\":{\"auth\":{\"accounts\":[{\"@type\":"
        "\"/cosmos.auth.v1beta1.BaseAccount\",\"address\":"
        "\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\"},{\"@type\":"
        "\"/cosmos.auth.v1beta1.BaseAccount\",\"address\":"
        "\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\"}]}}}",
        "{\"chain_id\":\"c\",\"app_state\":{\"bank\":{\"balances\":[{\"address\":"
        "\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\",\"coins\":[{\"denom\":\"ngonka\","
        "\"amount\":\"5\"}]}],\"supply\":[{\"denom\":\"ngonka\",\"amount\":\"6\"}]}}}",
        "{\"chain_id\":\"c\",\"app_state\":{\"bank\":{\"balances\":[{\"address\":"
        "\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\",\"coins\":[{\"denom\":\"ngonka\","
        "\"amount\":\"-5\"}]}]}}}",
        "{\"chain_id\":\"c\",\"app_state\":{\"inference\":{\"params\":{\"epoch_params\":"
        "{\"epoch_length\":\"0\"}}}}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *g = json_loads(bad[i], 0, NULL);
        CHECK(g != NULL);
        gd_app *app = NULL;
        CHECK_OK(gd_app_new(&app, NULL));
        CHECK_OK(gd_app_register_standard(app));
        gd_status s = gd_app_init_chain(app, g);
        if (s == GD_OK)
            fprintf(stderr, "genesis %zu accepted\n", i);
        CHECK(s != GD_OK);
        gd_app_free(app);
        json_decref(g);
    }
}

/* --- a local failure is not a transaction result ------------------------------- */

/* A test module whose one message fails as its amount says: "chain" with a
 * module error (a result), "nomem" and "io" as this node's own failures. */
static gd_status fault_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer,
                                size_t cap) {
    (void)ctx;
    const Cosmos__Bank__V1beta1__MsgSend *m = (const Cosmos__Bank__V1beta1__MsgSend *)msg;
    snprintf(signer, cap, "%s", m->from_address);
    return GD_OK;
}

static gd_status fault_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                               gd_buf *response) {
    (void)app;
    (void)response;
    const Cosmos__Bank__V1beta1__MsgSend *m = (const Cosmos__Bank__V1beta1__MsgSend *)msg;
    char what[16] = "";
    if (m->n_amount == 1)
        snprintf(what, sizeof what, "%s", m->amount[0]->denom);
    if (strcmp(what, "nomem") == 0)
        return gd_fail(GD_ERR_NOMEM, "out of memory (injected)");
    if (strcmp(what, "io") == 0)
        return gd_fail(GD_ERR_IO, "disk error (injected)");
    return gd_ctx_fail(ctx, "fault", 7, "refused (injected)");
}

static const gd_msg_route k_fault_msgs[] = {{"/gd.test.MsgFault",
                                             &cosmos__bank__v1beta1__msg_send__descriptor,
                                             fault_validate, fault_execute, GD_MSG_DECODE_PLAIN}};
static const gd_module k_fault_module = {.name = "fault", .msgs = k_fault_msgs, .n_msgs = 1};

static void fault_tx(app_fixture *f, gd_buf *out, int from, const char *what) {
    Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
    coin.denom = (char *)what;
    coin.amount = "1";
    Cosmos__Base__V1beta1__Coin *coins[1] = {&coin};
    Cosmos__Bank__V1beta1__MsgSend m = COSMOS__BANK__V1BETA1__MSG_SEND__INIT;
    m.from_address = f->addr[from];
    m.to_address = f->addr[from];
    m.n_amount = 1;
    m.amount = coins;
    CHECK_OK(fix_msg_tx(f, out, from, "/gd.test.MsgFault", &m));
}

/* A message that fails for a reason of the transaction is a result (code
 * and log), the same on every node; one that fails because this node ran
 * out of memory or hit a disk error is not: delivering returns the error,
 * so the node abandons the block instead of storing a result and app hash
 * no other node would have. */
static void test_local_failure_is_not_a_result(void) {
    app_fixture f;
    fix_init_with(&f, &k_fault_module);
    gd_buf chain = {0}, nomem = {0}, io = {0};
    fault_tx(&f, &chain, 0, "chain");
    fault_tx(&f, &nomem, 1, "nomem");
    fault_tx(&f, &io, 2, "io");
    uint8_t hash[32] = {0};
    CHECK_OK(gd_app_begin_block(f.app, 1, hash, NULL));
    gd_tx_outcome out;
    CHECK_OK(gd_app_deliver_tx(f.app, &out, chain.data, chain.len));
    CHECK(out.err.code == 7 && strcmp(out.err.codespace, "fault") == 0);
    gd_tx_outcome_free(&out);
    CHECK_STATUS(gd_app_deliver_tx(f.app, &out, nomem.data, nomem.len), GD_ERR_NOMEM);
    gd_tx_outcome_free(&out);
    CHECK_STATUS(gd_app_deliver_tx(f.app, &out, io.data, io.len), GD_ERR_IO);
    gd_tx_outcome_free(&out);
    /* In CheckTx too: the mempool answers with an error, not a verdict. */
    CHECK_STATUS(gd_app_check_tx(f.app, &out, nomem.data, nomem.len), GD_OK);
    CHECK(out.err.code == 0); /* CheckTx runs the ante only */
    gd_tx_outcome_free(&out);
    gd_buf_free(&chain);
    gd_buf_free(&nomem);
    gd_buf_free(&io);
    fix_free(&f);
}

int main(void) {
    RUN_TEST(test_genesis);
    RUN_TEST(test_send);
    RUN_TEST(test_failures_in_block);
    RUN_TEST(test_ante_refusals);
    RUN_TEST(test_check_state);
    RUN_TEST(test_fees);
    RUN_TEST(test_default_min_gas_price);
    RUN_TEST(test_simulate);
    RUN_TEST(test_query_errors);
    RUN_TEST(test_epochs);
    RUN_TEST(test_determinism_and_export);
    RUN_TEST(test_genesis_errors);
    RUN_TEST(test_local_failure_is_not_a_result);
    return gd_test_finish();
}
