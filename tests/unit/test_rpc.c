/* The CometBFT JSON-RPC client against a loopback mock node: success,
 * ABCI error codes, JSON-RPC errors, malformed answers, timeouts, dropped
 * and refused connections, oversized answers. */
#include <stdlib.h>
#include <time.h>

#include "chain/client/rpc.h"
#include "common/base64.h"
#include "tests/support/mock_http.h"
#include "tests/support/testkit.h"

/* What the mock node answers next, set by each test. */
typedef struct mock_plan {
    const char *raw;      /* answer this body verbatim */
    int raw_status;
    json_t *result;       /* or this JSON-RPC result (borrowed; incref'd per answer) */
    int error_code;       /* or this JSON-RPC error */
    const char *error_data;
    int delay_ms;
    bool drop;
    int fail_first;       /* drop the first N requests, then answer normally */
    char last_method[64];
    json_t *last_params;  /* copy of the last request's params */
} mock_plan;

static void mock_handler(void *ctx, const gd_mock_request *req, gd_mock_response *resp) {
    mock_plan *plan = ctx;
    snprintf(plan->last_method, sizeof plan->last_method, "%s", req->rpc_method);
    json_decref(plan->last_params);
    plan->last_params = req->rpc_params ? json_deep_copy(req->rpc_params) : NULL;
    resp->delay_ms = plan->delay_ms;
    if (plan->fail_first > 0) {
        plan->fail_first--;
        resp->drop = true;
        return;
    }
    if (plan->drop)
        resp->drop = true;
    else if (plan->raw)
        gd_mock_raw(resp, plan->raw_status ? plan->raw_status : 200, plan->raw);
    else if (plan->error_code)
        gd_mock_error(resp, req, plan->error_code, "Internal error", plan->error_data);
    else
        gd_mock_result(resp, req, json_incref(plan->result));
}

static gd_rpc *open_client(const char *url, int retries, long timeout_ms) {
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.max_retries = retries;
    opt.timeout_ms = timeout_ms;
    opt.retry_base_ms = 10;
    opt.retry_cap_ms = 20;
    gd_rpc *rpc = NULL;
    if (gd_rpc_open(&rpc, url, &opt) != GD_OK)
        abort();
    return rpc;
}

static const char *status_result =
    "{\"node_info\":{\"protocol_version\":{\"p2p\":\"8\",\"block\":\"11\",\"app\":\"0\"},"
    "\"id\":\"3a1f\",\"listen_addr\":\"tcp://0.0.0.0:26656\",\"network\":\"gonka-mainnet\","
    "\"version\":\"0.38.17\",\"channels\":\"40\",\"moniker\":\"node-1\",\"other\":{\"tx_index\":"
    "\"on\",\"rpc_address\":\"tcp://0.0.0.0:26657\"}},\"sync_info\":{\"latest_block_hash\":"
    "\"A2C1D1E7B0F1A2C1D1E7B0F1A2C1D1E7B0F1A2C1D1E7B0F1A2C1D1E7B0F1A2C1\",\"latest_app_hash\":"
    "\"00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\",\"latest_block_height\":"
    "\"1234567\",\"latest_block_time\":\"2026-11-29T10:00:00.123456789Z\",\"earliest_block_height\""
    ":\"1\",\"catching_up\":false},\"validator_info\":{\"address\":\"AB\",\"voting_power\":\"0\"}}";

static void test_status(void) {
    mock_plan plan = {0};
    plan.result = json_loads(status_result, 0, NULL);
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc *rpc = open_client(gd_mock_url(srv), 0, 2000);
    gd_node_status st;
    CHECK_OK(gd_rpc_status(rpc, &st));
    CHECK_STR_EQ(st.network, "gonka-mainnet");
    CHECK(st.latest_block_height == 1234567);
    CHECK(st.earliest_block_height == 1);
    CHECK(!st.catching_up);
    CHECK_STR_EQ(st.moniker, "node-1");
    CHECK_STR_EQ(plan.last_method, "status");
    gd_rpc_close(rpc);
    /* tcp:// addresses (as in Cosmos config files) work too. */
    char url[80];
    snprintf(url, sizeof url, "tcp://%s", gd_mock_url(srv) + strlen("http://"));
    rpc = open_client(url, 0, 2000);
    CHECK_OK(gd_rpc_status(rpc, &st));
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.result);
    json_decref(plan.last_params);
}

static void test_abci_query(void) {
    mock_plan plan = {0};
    /* Success: value is base64 of the protobuf answer; height is a string. */
    plan.result = json_loads("{\"response\":{\"value\":\"CgZuZ29ua2E=\",\"height\":\"77\"}}", 0,
                             NULL);
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc *rpc = open_client(gd_mock_url(srv), 0, 2000);
    gd_abci_query_result r = {0};
    CHECK_OK(gd_rpc_abci_query(rpc, &r, "/cosmos.bank.v1beta1.Query/Balance",
                               (const uint8_t *)"\x0a\x01\x41", 3, 0));
    CHECK(r.result.code == 0 && r.height == 77);
    CHECK(r.value.len == 8 && memcmp(r.value.data, "\x0a\x06ngonka", 8) == 0);
    /* The request carries path, hex data, height as a string, prove false. */
    CHECK_STR_EQ(plan.last_method, "abci_query");
    CHECK_STR_EQ(json_string_value(json_object_get(plan.last_params, "path")),
                 "/cosmos.bank.v1beta1.Query/Balance");
    CHECK_STR_EQ(json_string_value(json_object_get(plan.last_params, "data")), "0a0141");
    CHECK_STR_EQ(json_string_value(json_object_get(plan.last_params, "height")), "0");
    CHECK(json_is_false(json_object_get(plan.last_params, "prove")));
    /* A non-zero code comes back in the result, with codespace and log. */
    json_decref(plan.result);
    plan.result = json_loads("{\"response\":{\"code\":22,\"codespace\":\"sdk\",\"log\":\"key not "
                             "found\",\"height\":\"78\"}}", 0, NULL);
    CHECK_OK(gd_rpc_abci_query(rpc, &r, "/x", NULL, 0, 0));
    CHECK(r.result.code == 22);
    CHECK_STR_EQ(r.result.codespace, "sdk");
    CHECK_STR_EQ(r.result.log, "key not found");
    char why[512];
    gd_abci_code_describe(&r.result, why, sizeof why);
    CHECK(strstr(why, "code 22") && strstr(why, "key not found") && strstr(why, "receive funds"));
    /* Bad base64 in value is a parse error. */
    json_decref(plan.result);
    plan.result = json_loads("{\"response\":{\"value\":\"!!!\"}}", 0, NULL);
    CHECK_STATUS(gd_rpc_abci_query(rpc, &r, "/x", NULL, 0, 0), GD_ERR_PARSE);
    gd_abci_query_result_free(&r);
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.result);
    json_decref(plan.last_params);
}

static void test_broadcast_and_tx(void) {
    mock_plan plan = {0};
    plan.result = json_loads("{\"code\":0,\"data\":\"\",\"log\":\"[]\",\"codespace\":\"\",\"hash\":"
                             "\"4E16A0C2696DB87BF3687C136B724AE262A1CB6A7DC776507A9FCF7457F6F38A\"}",
                             0, NULL);
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc *rpc = open_client(gd_mock_url(srv), 0, 2000);
    gd_broadcast_result b;
    CHECK_OK(gd_rpc_broadcast_tx_sync(rpc, &b, (const uint8_t *)"\x0a\x00", 2));
    CHECK(b.result.code == 0);
    CHECK_STR_EQ(b.hash, "4E16A0C2696DB87BF3687C136B724AE262A1CB6A7DC776507A9FCF7457F6F38A");
    CHECK_STR_EQ(json_string_value(json_object_get(plan.last_params, "tx")), "CgA=");
    /* CheckTx failure codes are results, not transport errors. */
    json_decref(plan.result);
    plan.result = json_loads("{\"code\":32,\"codespace\":\"sdk\",\"log\":\"account sequence "
                             "mismatch, expected 5, got 4: incorrect account sequence\",\"hash\":"
                             "\"4E16A0C2696DB87BF3687C136B724AE262A1CB6A7DC776507A9FCF7457F6F38A\"}",
                             0, NULL);
    CHECK_OK(gd_rpc_broadcast_tx_sync(rpc, &b, (const uint8_t *)"\x0a\x00", 2));
    CHECK(b.result.code == 32);
    /* "tx already exists in cache" (a JSON-RPC error) means code 19. */
    json_decref(plan.result);
    plan.result = NULL;
    plan.error_code = -32603;
    plan.error_data = "tx already exists in cache";
    CHECK_OK(gd_rpc_broadcast_tx_sync(rpc, &b, (const uint8_t *)"\x0a\x00", 2));
    CHECK(b.result.code == 19);
    /* /tx: not found, then found. */
    uint8_t hash[32] = {1, 2, 3};
    gd_tx_result t;
    plan.error_data = "tx (0102030000000000000000000000000000000000000000000000000000000000) not found";
    CHECK_STATUS(gd_rpc_tx(rpc, &t, hash), GD_ERR_NOT_FOUND);
    CHECK_STR_EQ(plan.last_method, "tx");
    CHECK_STR_EQ(json_string_value(json_object_get(plan.last_params, "hash")),
                 "AQIDAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    plan.error_code = 0;
    plan.result = json_loads(
        "{\"hash\":\"0102030000000000000000000000000000000000000000000000000000000000\","
        "\"height\":\"42\",\"index\":1,\"tx_result\":{\"code\":5,\"codespace\":\"sdk\",\"log\":"
        "\"insufficient funds\",\"gas_wanted\":\"200000\",\"gas_used\":\"51234\",\"events\":[]},"
        "\"tx\":\"CgA=\"}", 0, NULL);
    CHECK_OK(gd_rpc_tx(rpc, &t, hash));
    CHECK(t.height == 42 && t.index == 1 && t.result.code == 5 && t.gas_used == 51234 &&
          t.gas_wanted == 200000);
    /* /block */
    json_decref(plan.result);
    plan.result = json_loads(
        "{\"block_id\":{\"hash\":\"AA00000000000000000000000000000000000000000000000000000000000000\","
        "\"parts\":{\"total\":1,\"hash\":\"BB\"}},\"block\":{\"header\":{\"chain_id\":\"prod-sim\","
        "\"height\":\"9\",\"time\":\"2026-11-29T10:00:00Z\",\"app_hash\":\"\",\"proposer_address\":"
        "\"C0FFEE\"},\"data\":{\"txs\":[\"CgA=\",\"CgE=\"]},\"evidence\":{\"evidence\":[]},"
        "\"last_commit\":null}}", 0, NULL);
    gd_block_info blk;
    CHECK_OK(gd_rpc_block(rpc, &blk, 9));
    CHECK(blk.height == 9 && blk.n_txs == 2);
    CHECK_STR_EQ(blk.chain_id, "prod-sim");
    CHECK_STR_EQ(json_string_value(json_object_get(plan.last_params, "height")), "9");
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.result);
    json_decref(plan.last_params);
}

static void test_malformed_answers(void) {
    const char *bodies[] = {
        "not json",
        "[]",
        "{\"jsonrpc\":\"2.0\",\"id\":1}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"x\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"node_info\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"node_info\":{\"network\":7},\"sync_info\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"node_info\":{\"network\":\"x\"},\"sync_info\":"
        "{\"latest_block_height\":\"12x\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"node_info\":{\"network\":\"x\"},\"sync_info\":"
        "{\"latest_block_height\":\"99999999999999999999\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"node_info\":{\"network\":\"x\"},\"sync_info\":"
        "{\"latest_block_height\":\"1\",\"latest_block_hash\":\"XYZ\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}",
        "{\"a\":1,\"a\":2}",
    };
    mock_plan plan = {0};
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc *rpc = open_client(gd_mock_url(srv), 0, 2000);
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        plan.raw = bodies[i];
        gd_node_status st;
        gd_status s = gd_rpc_status(rpc, &st);
        if (s != GD_ERR_PARSE)
            fprintf(stderr, "body %zu: %s (%s)\n", i, gd_status_name(s), gd_error_detail());
        CHECK(s == GD_ERR_PARSE);
    }
    /* A JSON-RPC error is reported with code, message and data. */
    plan.raw = NULL;
    plan.error_code = -32602;
    plan.error_data = "invalid params";
    gd_node_status st;
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_RPC);
    CHECK(gd_rpc_last_error(rpc)->code == -32602);
    CHECK(strstr(gd_error_detail(), "-32602") && strstr(gd_error_detail(), "invalid params"));
    /* A non-JSON 404 is not retried and says what is wrong. */
    plan.error_code = 0;
    plan.raw = "<html>not here</html>";
    plan.raw_status = 404;
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_RPC);
    CHECK(strstr(gd_error_detail(), "HTTP 404") != NULL);
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.last_params);
}

static void test_timeout_and_retries(void) {
    mock_plan plan = {0};
    plan.result = json_loads(status_result, 0, NULL);
    plan.delay_ms = 400;
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc *rpc = open_client(gd_mock_url(srv), 0, 100);
    gd_node_status st;
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_TIMEOUT);
    gd_rpc_close(rpc);
    /* Two retries: three attempts reach the node. */
    int before = gd_mock_count(srv);
    rpc = open_client(gd_mock_url(srv), 2, 100);
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_TIMEOUT);
    /* The mock serves one connection at a time, each delayed: wait for all. */
    for (int i = 0; i < 100 && gd_mock_count(srv) - before < 3; i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    CHECK(gd_mock_count(srv) - before == 3);
    gd_rpc_close(rpc);
    /* Dropped connections are retried, and a later success is returned. */
    plan.delay_ms = 0;
    plan.fail_first = 2;
    rpc = open_client(gd_mock_url(srv), 3, 2000);
    CHECK_OK(gd_rpc_status(rpc, &st));
    CHECK(st.latest_block_height == 1234567);
    gd_rpc_close(rpc);
    /* Without retries the dropped connection is a network error. */
    plan.fail_first = 1;
    rpc = open_client(gd_mock_url(srv), 0, 2000);
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_NETWORK);
    gd_rpc_close(rpc);
    /* HTTP 503 with a non-JSON body is retried, then reported. */
    plan.raw = "<html>busy</html>";
    plan.raw_status = 503;
    before = gd_mock_count(srv);
    rpc = open_client(gd_mock_url(srv), 1, 2000);
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_NETWORK);
    CHECK(gd_mock_count(srv) - before == 2);
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.result);
    json_decref(plan.last_params);
}

typedef struct wait_seen {
    int calls;
    char method[32];
    long waited_ms, deadline_ms;
} wait_seen;

static void on_wait(void *ctx, const char *url, const char *method, long waited_ms,
                    long deadline_ms) {
    wait_seen *w = ctx;
    w->calls++;
    snprintf(w->method, sizeof w->method, "%s", method);
    w->waited_ms = waited_ms;
    w->deadline_ms = deadline_ms;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A deadline bounds a call with all its retries (a node that accepts and
 * never answers costs the deadline, not every try's timeout), and a slow
 * call tells the caller, once, what it is waiting for. */
static void test_deadline_and_wait_notice(void) {
    mock_plan plan = {0};
    plan.result = json_loads(status_result, 0, NULL);
    plan.delay_ms = 3000;
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.timeout_ms = 1000;
    opt.max_retries = 3;
    opt.retry_base_ms = 10;
    opt.retry_cap_ms = 20;
    opt.deadline_ms = 1500;
    opt.notice_after_ms = 300;
    wait_seen seen = {0};
    opt.on_wait = on_wait;
    opt.on_wait_ctx = &seen;
    gd_rpc *rpc = NULL;
    CHECK_OK(gd_rpc_open(&rpc, gd_mock_url(srv), &opt));
    gd_node_status st;
    double t0 = now_s();
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_TIMEOUT);
    double took = now_s() - t0;
    CHECK(took >= 1.4 && took < 2.5); /* four tries of 1 s each would take 4 s */
    CHECK(strstr(gd_error_detail(), "within 1500 ms") != NULL);
    CHECK(seen.calls == 1);
    CHECK_STR_EQ(seen.method, "status");
    CHECK(seen.waited_ms >= 300 && seen.waited_ms < 1500 && seen.deadline_ms == 1500);
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.result);
    json_decref(plan.last_params);
}

static volatile int cancel_flag;

static void cancel_on_wait(void *ctx, const char *url, const char *method, long waited_ms,
                           long deadline_ms) {
    (void)ctx, (void)url, (void)method, (void)waited_ms, (void)deadline_ms;
    cancel_flag = 1;
}

/* A stop asked for ends a call at once: a transfer in progress is aborted
 * (not waited out with its retries), and a call made after it never
 * reaches the node. */
static void test_cancel(void) {
    mock_plan plan = {0};
    plan.result = json_loads(status_result, 0, NULL);
    plan.delay_ms = 3000;
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.timeout_ms = 10000;
    opt.max_retries = 3;
    opt.notice_after_ms = 200;
    opt.on_wait = cancel_on_wait; /* asks for the stop 200 ms into the call */
    opt.cancel = &cancel_flag;
    cancel_flag = 0;
    gd_rpc *rpc = NULL;
    CHECK_OK(gd_rpc_open(&rpc, gd_mock_url(srv), &opt));
    gd_node_status st;
    double t0 = now_s();
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_CANCELLED);
    CHECK(now_s() - t0 < 2.0); /* the node answers after 3 s; four tries would take 40 */
    CHECK(strstr(gd_error_detail(), "stopped") != NULL);
    for (int i = 0; i < 100 && gd_mock_count(srv) < 1; i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    int reached = gd_mock_count(srv);
    CHECK(reached == 1);
    t0 = now_s();
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_CANCELLED);
    CHECK(now_s() - t0 < 0.5);
    gd_rpc_set_cancel(rpc, NULL);
    plan.delay_ms = 0;
    CHECK_OK(gd_rpc_status(rpc, &st)); /* cleared: calls go through again */
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    json_decref(plan.result);
    json_decref(plan.last_params);
}

static void test_refused_and_bad_urls(void) {
    char url[64];
    gd_mock_refused_url(url, sizeof url);
    gd_rpc *rpc = open_client(url, 1, 1000);
    gd_node_status st;
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_NETWORK);
    CHECK(strstr(gd_error_detail(), "cannot connect") != NULL);
    gd_rpc_close(rpc);
    gd_rpc *bad = NULL;
    CHECK_STATUS(gd_rpc_open(&bad, "ftp://x", NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_rpc_open(&bad, "localhost:26657", NULL), GD_ERR_INVALID);
    CHECK_STATUS(gd_rpc_open(&bad, "http://", NULL), GD_ERR_INVALID);
}

static void test_oversized_answer(void) {
    mock_plan plan = {0};
    size_t n = 300000;
    char *big = malloc(n + 64);
    snprintf(big, 64, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"");
    size_t o = strlen(big);
    memset(big + o, 'a', n);
    strcpy(big + o + n, "\"}}");
    plan.raw = big;
    gd_mock_server *srv = gd_mock_start(mock_handler, &plan);
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.max_retries = 0;
    opt.max_response = 100000;
    gd_rpc *rpc = NULL;
    CHECK_OK(gd_rpc_open(&rpc, gd_mock_url(srv), &opt));
    gd_node_status st;
    CHECK_STATUS(gd_rpc_status(rpc, &st), GD_ERR_LIMIT);
    gd_rpc_close(rpc);
    gd_mock_stop(srv);
    free(big);
    json_decref(plan.last_params);
}

int main(void) {
    RUN_TEST(test_status);
    RUN_TEST(test_abci_query);
    RUN_TEST(test_broadcast_and_tx);
    RUN_TEST(test_malformed_answers);
    RUN_TEST(test_timeout_and_retries);
    RUN_TEST(test_deadline_and_wait_notice);
    RUN_TEST(test_cancel);
    RUN_TEST(test_refused_and_bad_urls);
    RUN_TEST(test_oversized_answer);
    return gd_test_finish();
}
