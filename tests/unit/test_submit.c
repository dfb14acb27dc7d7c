/* Submitting transactions against the scripted node: account lookup,
 * sequence resync on code 32, inclusion polling, chain errors, timeouts,
 * and the typed queries. */
#include "chain/client/query.h"
#include "chain/client/submit.h"
#include "chain/keys/address.h"
#include "chain/wire/msg.h"
#include "plugin/ports/chain_port_rpc.h"
#include "tests/support/fake_node.h"
#include "tests/support/testkit.h"

typedef struct fixture {
    fake_node node;
    gd_mock_server *srv;
    gd_rpc *rpc;
    gd_key key;
    char from[GD_ADDRESS_STR_MAX];
    gd_any msg;
    gd_coin coin;
    gd_tx_request req;
    gd_submit_options opt;
} fixture;

static void fixture_up(fixture *f) {
    memset(f, 0, sizeof *f);
    CHECK_OK(gd_key_from_hex(&f->key, "2222222222222222222222222222222222222222222222222222222222222222"));
    CHECK_OK(gd_address_from_pubkey(f->from, sizeof f->from, "gonka", f->key.pubkey));
    fake_node_init(&f->node, f->from);
    f->srv = gd_mock_start(fake_node_handler, &f->node);
    gd_rpc_options ro;
    gd_rpc_options_default(&ro);
    ro.retry_base_ms = 5;
    ro.retry_cap_ms = 10;
    CHECK_OK(gd_rpc_open(&f->rpc, gd_mock_url(f->srv), &ro));
    CHECK_OK(gd_coin_parse(&f->coin, "1000ngonka"));
    CHECK_OK(gd_msg_send(&f->msg, f->from, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc",
                         &f->coin, 1));
    f->req = (gd_tx_request){.msgs = &f->msg, .n_msgs = 1, .gas_limit = GD_GAS_DEFAULT,
                             .chain_id = "prod-sim"};
    gd_submit_options_default(&f->opt);
    f->opt.poll_interval_ms = 5;
    f->opt.wait_timeout_ms = 2000;
}

static void fixture_down(fixture *f) {
    gd_rpc_close(f->rpc);
    gd_mock_stop(f->srv);
    gd_any_free(&f->msg);
}

static void test_happy_path(void) {
    fixture f;
    fixture_up(&f);
    f.node.sequence = f.node.reported_sequence = 3;
    f.node.polls_before_found = 2;
    gd_submit_result r;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK(r.included && r.height == 101 && r.deliver.code == 0 && r.gas_used == 61234);
    CHECK(r.account_number == 7 && r.sequence == 3);
    CHECK(f.node.broadcasts == 1 && f.node.last_tx_sequence == 3);
    CHECK_STR_EQ(r.txhash, f.node.last_txhash);
    CHECK(f.node.tx_polls == 3);
    fixture_down(&f);
}

/* The node reports a stale sequence (another tx landed meanwhile): the
 * first broadcast gets code 32, the client signs again with the expected one. */
static void test_sequence_resync(void) {
    fixture f;
    fixture_up(&f);
    f.node.sequence = 5;
    f.node.reported_sequence = 3;
    gd_submit_result r;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK(f.node.broadcasts == 2);
    CHECK(f.node.last_tx_sequence == 5 && r.sequence == 5 && r.included);
    /* With no retries allowed, code 32 is reported. */
    f.node.reported_sequence = 0;
    f.opt.max_sequence_retries = 0;
    CHECK_STATUS(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r), GD_ERR_CHAIN);
    CHECK(r.check.code == 32);
    CHECK(strstr(gd_error_detail(), "expected 6") != NULL);
    fixture_down(&f);
}

static void test_wrong_chain_id(void) {
    fixture f;
    fixture_up(&f);
    f.req.chain_id = "gonka-mainnet";
    gd_submit_result r;
    CHECK_STATUS(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r), GD_ERR_CHAIN);
    CHECK(r.check.code == 4 && r.wrong_chain);
    CHECK(strstr(gd_error_detail(), "node's chain-id is 'prod-sim'") != NULL);
    fixture_down(&f);
}

/* A member's chain port turns a chain id the node does not have into an
 * error that stops the member (GD_ERR_INVALID), not a refusal of one duty
 * that the next block would pay for and log again, for every duty. */
static void test_port_wrong_chain_stops(void) {
    fixture f;
    fixture_up(&f);
    gd_chain_rpc c;
    CHECK_OK(gd_chain_rpc_open(&c, gd_mock_url(f.srv), "gonka-mainnet", ""));
    gd_chain_port port = gd_chain_rpc_port(&c);
    uint32_t code = 0, ticket = 0;
    char log[256];
    CHECK_STATUS(port.iface->send(port.ctx, &f.key, &f.msg, 1, &ticket, &code, log, sizeof log),
                 GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "'prod-sim'") != NULL &&
          strstr(gd_error_detail(), "chain.chain_id") != NULL);
    CHECK_STATUS(port.iface->submit(port.ctx, &f.key, &f.msg, 1, &code, log, sizeof log),
                 GD_ERR_INVALID);
    gd_chain_rpc_close(&c);
    /* The right id: the same transaction passes. */
    CHECK_OK(gd_chain_rpc_open(&c, gd_mock_url(f.srv), "prod-sim", ""));
    port = gd_chain_rpc_port(&c);
    CHECK_OK(port.iface->submit(port.ctx, &f.key, &f.msg, 1, &code, log, sizeof log));
    CHECK(code == 0);
    gd_chain_rpc_close(&c);
    fixture_down(&f);
}

static void test_failed_in_block(void) {
    fixture f;
    fixture_up(&f);
    f.node.deliver_code = 5;
    gd_submit_result r;
    CHECK_STATUS(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r), GD_ERR_CHAIN);
    CHECK(r.included && r.deliver.code == 5);
    CHECK(strstr(gd_error_detail(), "included at height") != NULL);
    fixture_down(&f);
}

static void test_not_included_in_time(void) {
    fixture f;
    fixture_up(&f);
    f.node.never_include = true;
    f.opt.wait_timeout_ms = 100;
    gd_submit_result r;
    CHECK_STATUS(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r), GD_ERR_TIMEOUT);
    CHECK(!r.included && r.txhash[0] != '\0');
    /* Not waiting returns right after CheckTx. */
    f.opt.wait = false;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK(!r.included && r.check.code == 0);
    fixture_down(&f);
}

/* The first broadcast reaches the mempool but its reply is lost: the RPC
 * layer retries the same bytes, the node says "already in cache", and the
 * client carries on as accepted. */
static void test_lost_reply(void) {
    fixture f;
    fixture_up(&f);
    f.node.drop_first_broadcast = true;
    gd_submit_result r;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK(f.node.broadcasts == 2 && r.included && r.check.code == 19);
    CHECK(f.node.sequence == 1); /* one transaction, not two */
    fixture_down(&f);
}

static void test_unknown_account(void) {
    fixture f;
    fixture_up(&f);
    f.node.address[0] = '\0';
    gd_submit_result r;
    CHECK_STATUS(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r), GD_ERR_NOT_FOUND);
    CHECK(strstr(gd_error_detail(), "does not exist on chain yet") != NULL);
    CHECK(f.node.broadcasts == 0);
    fixture_down(&f);
}

static void test_gas_auto(void) {
    fixture f;
    fixture_up(&f);
    f.opt.gas_auto = true;
    f.opt.gas_adjustment = 1.5;
    gd_submit_result r;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK(f.node.last_tx_gas == 120000 && r.gas_limit == 120000);
    fixture_down(&f);
}

/* A gas price instead of fees: the fee is ceil(gas x price) of the limit
 * actually signed, so after --gas auto has set it. */
static void test_gas_price_fee(void) {
    fixture f;
    fixture_up(&f);
    gd_gas_price price;
    CHECK_OK(gd_gas_price_parse(&price, GD_GAS_PRICE_DEFAULT));
    f.req.gas_price = &price;
    gd_submit_result r;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK_STR_EQ(f.node.last_tx_fee, "500ngonka"); /* 200000 x 0.0025 */
    CHECK_STR_EQ(r.fee, "500ngonka");
    f.opt.gas_auto = true;
    f.opt.gas_adjustment = 1.5;
    f.node.simulate_gas = 100001; /* x 1.5 = 150002 gas: 375.005, paid as 376 */
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK(f.node.last_tx_gas == 150002);
    CHECK_STR_EQ(f.node.last_tx_fee, "376ngonka");
    CHECK_STR_EQ(r.fee, "376ngonka");
    /* A zero price pays nothing; fees and a price together are refused. */
    f.opt.gas_auto = false;
    CHECK_OK(gd_gas_price_parse(&price, "0"));
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK_STR_EQ(f.node.last_tx_fee, "");
    CHECK_STR_EQ(r.fee, "");
    f.req.fees = &f.coin;
    f.req.n_fees = 1;
    int before = f.node.broadcasts;
    CHECK_STATUS(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "not both") != NULL && f.node.broadcasts == before);
    f.req.gas_price = NULL;
    CHECK_OK(gd_tx_submit(f.rpc, &f.key, &f.req, &f.opt, &r));
    CHECK_STR_EQ(f.node.last_tx_fee, "1000ngonka");
    fixture_down(&f);
}

static void test_queries(void) {
    fixture f;
    fixture_up(&f);
    f.node.reported_sequence = 9;
    gd_account_info acc;
    CHECK_OK(gd_query_account_info(f.rpc, &acc, f.from, NULL));
    CHECK(acc.account_number == 7 && acc.sequence == 9 && !acc.has_pubkey);
    CHECK_STR_EQ(acc.address, f.from);
    gd_coin bal;
    CHECK_OK(gd_query_balance(f.rpc, &bal, f.from, "ngonka", NULL));
    CHECK_STR_EQ(bal.amount, "1000000");
    CHECK_OK(gd_query_balance(f.rpc, &bal, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", "ngonka",
                              NULL));
    CHECK_STR_EQ(bal.amount, "0");
    CHECK_STATUS(gd_query_balance(f.rpc, &bal, "gonka1bad", "ngonka", NULL), GD_ERR_PARSE);
    gd_epoch_info info;
    CHECK_OK(gd_query_epoch_info(f.rpc, &info, NULL));
    CHECK(info.block_height == 100 && info.epoch.index == 5 &&
          info.epoch.poc_start_block_height == 86400 && info.params.epoch_length == 17280 &&
          info.params.poc_validation_duration == 480);
    gd_query_error qe;
    CHECK_STATUS(gd_query_account_info(f.rpc, &acc, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc",
                                       &qe),
                 GD_ERR_NOT_FOUND);
    CHECK(qe.abci.code == 22);
    fixture_down(&f);
}

static void test_parse_expected_sequence(void) {
    uint64_t v;
    CHECK_OK(gd_parse_expected_sequence("account sequence mismatch, expected 12, got 11: incorrect "
                                        "account sequence", &v));
    CHECK(v == 12);
    CHECK_STATUS(gd_parse_expected_sequence("something else", &v), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_expected_sequence("expected x", &v), GD_ERR_PARSE);
    CHECK_STATUS(gd_parse_expected_sequence("expected 99999999999999999999999", &v), GD_ERR_PARSE);
}

int main(void) {
    RUN_TEST(test_happy_path);
    RUN_TEST(test_sequence_resync);
    RUN_TEST(test_wrong_chain_id);
    RUN_TEST(test_port_wrong_chain_stops);
    RUN_TEST(test_failed_in_block);
    RUN_TEST(test_not_included_in_time);
    RUN_TEST(test_lost_reply);
    RUN_TEST(test_unknown_account);
    RUN_TEST(test_gas_auto);
    RUN_TEST(test_gas_price_fee);
    RUN_TEST(test_queries);
    RUN_TEST(test_parse_expected_sequence);
    return gd_test_finish();
}
