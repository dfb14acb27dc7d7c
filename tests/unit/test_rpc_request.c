/* Requests to the localnet RPC as a CometBFT 0.38 node reads them: every
 * method by named params, positional params and URI; each argument type in
 * its good and bad encodings; and the JSON-RPC error each malformed request
 * gets (-32700, -32600, -32601, -32602). */
#include <stdlib.h>

#include "localnet/rpc_request.h"
#include "tests/support/testkit.h"

static gd_rpc_request body(const char *text) {
    gd_rpc_request r;
    if (gd_rpc_request_parse_body(&r, text, strlen(text)) != GD_OK) {
        fprintf(stderr, "parse_body failed: %s\n", gd_error_detail());
        abort();
    }
    return r;
}

static gd_rpc_request uri(const char *path, const char *query) {
    gd_rpc_request r;
    if (gd_rpc_request_parse_uri(&r, path, query) != GD_OK) {
        fprintf(stderr, "parse_uri failed: %s\n", gd_error_detail());
        abort();
    }
    return r;
}

/* The only call of a non-batch request. */
static const gd_incoming_call *one(const gd_rpc_request *r) {
    if (r->n_calls != 1 || r->batch || r->calls == NULL) {
        fprintf(stderr, "expected one call, got %zu (batch %d)\n", r->n_calls, r->batch);
        abort();
    }
    return &r->calls[0];
}

static const gd_rpc_param_value *param(const gd_incoming_call *c, const char *name) {
    static const gd_rpc_param_value absent;
    int i = gd_rpc_param_index(c->method, name);
    return i < 0 ? &absent : &c->params[i];
}

/* The call succeeded for method, printing the reason when it did not. */
static int call_ok(const gd_incoming_call *c, const char *method) {
    if (c->error_code != 0 || c->method == NULL || strcmp(c->method->name, method) != 0) {
        fprintf(stderr, "  expected %s, got error %d %s: %s\n", method, c->error_code,
                c->error_message, c->error_data);
        return 0;
    }
    return 1;
}

/* The call failed with code, and its reason mentions `about` (if given). */
static int call_err(const gd_incoming_call *c, int code, const char *about) {
    if (c->error_code != code || (about && strstr(c->error_data, about) == NULL)) {
        fprintf(stderr, "  expected error %d about '%s', got %d %s: %s\n", code,
                about ? about : "", c->error_code, c->error_message, c->error_data);
        return 0;
    }
    for (int i = 0; i < GD_RPC_MAX_PARAMS; i++)
        if (c->params[i].present)
            return 0;
    return 1;
}

static int str_param(const gd_incoming_call *c, const char *name, const char *want) {
    const gd_rpc_param_value *p = param(c, name);
    if (!p->present || p->str == NULL || strcmp(p->str, want) != 0 || p->len != strlen(want)) {
        fprintf(stderr, "  %s: got '%s', expected '%s'\n", name, p->str ? p->str : "(absent)",
                want);
        return 0;
    }
    return 1;
}

static int bytes_param(const gd_incoming_call *c, const char *name, const char *hex) {
    const gd_rpc_param_value *p = param(c, name);
    if (!p->present)
        return 0;
    if (p->len == 0)
        return hex[0] == '\0';
    return p->bytes != NULL && gd_test_hex_eq(p->bytes, p->len, hex);
}

static int i64_param(const gd_incoming_call *c, const char *name, int64_t want) {
    const gd_rpc_param_value *p = param(c, name);
    return p->present && p->i64 == want;
}

static int bool_param(const gd_incoming_call *c, const char *name, bool want) {
    const gd_rpc_param_value *p = param(c, name);
    return p->present && p->b == want;
}

/* The error of a one-call body. */
static int body_err(const char *text, int code, const char *about) {
    gd_rpc_request r = body(text);
    int ok = call_err(one(&r), code, about);
    if (!ok)
        fprintf(stderr, "  for body %s\n", text);
    gd_rpc_request_free(&r);
    return ok;
}

static int uri_err(const char *path, const char *query, int code, const char *about) {
    gd_rpc_request r = uri(path, query);
    int ok = call_err(one(&r), code, about);
    if (!ok)
        fprintf(stderr, "  for %s?%s\n", path, query ? query : "");
    gd_rpc_request_free(&r);
    return ok;
}

/* The method of a one-call body, its value checked by the caller. */
#define REQ(method, params) \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" method "\",\"params\":" params "}"

static void test_method_table(void) {
    static const struct {
        const char *name;
        int n;
        const char *params[5];
    } want[] = {
        {"health", 0, {0}},
        {"status", 0, {0}},
        {"abci_info", 0, {0}},
        {"abci_query", 4, {"path", "data", "height", "prove"}},
        {"broadcast_tx_sync", 1, {"tx"}},
        {"broadcast_tx_async", 1, {"tx"}},
        {"tx", 2, {"hash", "prove"}},
        {"tx_search", 5, {"query", "prove", "page", "per_page", "order_by"}},
        {"block", 1, {"height"}},
        {"block_results", 1, {"height"}},
        {"genesis", 0, {0}},
        {"num_unconfirmed_txs", 0, {0}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const gd_rpc_method *m = gd_rpc_method_find(want[i].name);
        CHECK(m != NULL);
        if (m == NULL)
            continue;
        CHECK_STR_EQ(m->name, want[i].name);
        CHECK(m->n_params == want[i].n);
        for (int k = 0; k < want[i].n && k < m->n_params; k++) {
            CHECK_STR_EQ(m->params[k].name, want[i].params[k]);
            CHECK(gd_rpc_param_index(m, want[i].params[k]) == k);
        }
        CHECK(gd_rpc_param_index(m, "nope") == -1);
    }
    const gd_rpc_method *q = gd_rpc_method_find("abci_query");
    CHECK(q->params[0].type == GD_RPC_PARAM_STRING);
    CHECK(q->params[1].type == GD_RPC_PARAM_HEX_BYTES);
    CHECK(q->params[2].type == GD_RPC_PARAM_INT64);
    CHECK(q->params[3].type == GD_RPC_PARAM_BOOL);
    CHECK(gd_rpc_method_find("tx")->params[0].type == GD_RPC_PARAM_BYTES);
    CHECK(gd_rpc_method_find("broadcast_tx_sync")->params[0].type == GD_RPC_PARAM_BYTES);
    CHECK(gd_rpc_method_find("subscribe") == NULL); /* websocket-only in CometBFT */
    CHECK(gd_rpc_method_find("") == NULL);
    CHECK(gd_rpc_method_find(NULL) == NULL);
    CHECK(gd_rpc_method_find("Status") == NULL);
    CHECK(gd_rpc_param_index(NULL, "height") == -1);
    CHECK(gd_rpc_param_index(q, NULL) == -1);
}

static void test_json_named(void) {
    const char *noargs[] = {"health", "status", "abci_info", "genesis", "num_unconfirmed_txs"};
    for (size_t i = 0; i < 5; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s\",\"params\":{}}",
                 noargs[i]);
        gd_rpc_request r = body(text);
        CHECK(call_ok(one(&r), noargs[i]));
        CHECK(json_integer_value(one(&r)->id) == 7);
        gd_rpc_request_free(&r);
    }

    gd_rpc_request r = body(REQ("abci_query", "{\"path\":\"/cosmos.bank.v1beta1.Query/Balance\","
                                              "\"data\":\"0A2d\",\"height\":\"5\",\"prove\":true}"));
    const gd_incoming_call *c = one(&r);
    CHECK(call_ok(c, "abci_query"));
    CHECK(str_param(c, "path", "/cosmos.bank.v1beta1.Query/Balance"));
    CHECK(bytes_param(c, "data", "0a2d"));
    CHECK(i64_param(c, "height", 5));
    CHECK(bool_param(c, "prove", true));
    gd_rpc_request_free(&r);

    const char *bcast[] = {"broadcast_tx_sync", "broadcast_tx_async"};
    for (int i = 0; i < 2; i++) {
        char text[256];
        snprintf(text, sizeof text, REQ("%s", "{\"tx\":\"CgAKAQ==\"}"), bcast[i]);
        r = body(text);
        CHECK(call_ok(one(&r), bcast[i]));
        CHECK(bytes_param(one(&r), "tx", "0a000a01"));
        gd_rpc_request_free(&r);
    }

    r = body(REQ("tx", "{\"hash\":\"q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k=\",\"prove\":false}"));
    c = one(&r);
    CHECK(call_ok(c, "tx"));
    CHECK(bytes_param(c, "hash", "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"));
    CHECK(bool_param(c, "prove", false));
    gd_rpc_request_free(&r);

    r = body(REQ("tx_search", "{\"query\":\"tx.height=5\",\"prove\":false,\"page\":\"1\","
                              "\"per_page\":\"30\",\"order_by\":\"asc\"}"));
    c = one(&r);
    CHECK(call_ok(c, "tx_search"));
    CHECK(str_param(c, "query", "tx.height=5"));
    CHECK(bool_param(c, "prove", false));
    CHECK(i64_param(c, "page", 1));
    CHECK(i64_param(c, "per_page", 30));
    CHECK(str_param(c, "order_by", "asc"));
    gd_rpc_request_free(&r);

    r = body(REQ("block", "{\"height\":\"12\"}"));
    CHECK(call_ok(one(&r), "block"));
    CHECK(i64_param(one(&r), "height", 12));
    gd_rpc_request_free(&r);

    r = body(REQ("block_results", "{\"height\":13}"));
    CHECK(call_ok(one(&r), "block_results"));
    CHECK(i64_param(one(&r), "height", 13));
    gd_rpc_request_free(&r);

    /* Params left out are absent, not zero-valued-and-present. */
    r = body(REQ("tx_search", "{\"query\":\"tx.height=5\"}"));
    c = one(&r);
    CHECK(call_ok(c, "tx_search"));
    CHECK(!param(c, "page")->present && !param(c, "prove")->present);
    CHECK(!param(c, "order_by")->present && param(c, "order_by")->str == NULL);
    gd_rpc_request_free(&r);
}

static void test_json_positional(void) {
    const char *noargs[] = {"health", "status", "abci_info", "genesis", "num_unconfirmed_txs"};
    for (size_t i = 0; i < 5; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":[]}",
                 noargs[i]);
        gd_rpc_request r = body(text);
        CHECK(call_ok(one(&r), noargs[i]));
        gd_rpc_request_free(&r);
    }
    gd_rpc_request r = body(REQ("abci_query", "[\"/a.b.Query/C\",\"ff00\",\"-1\",false]"));
    const gd_incoming_call *c = one(&r);
    CHECK(call_ok(c, "abci_query"));
    CHECK(str_param(c, "path", "/a.b.Query/C"));
    CHECK(bytes_param(c, "data", "ff00"));
    CHECK(i64_param(c, "height", -1));
    CHECK(bool_param(c, "prove", false));
    gd_rpc_request_free(&r);

    r = body(REQ("broadcast_tx_sync", "[\"CgA=\"]"));
    CHECK(call_ok(one(&r), "broadcast_tx_sync"));
    CHECK(bytes_param(one(&r), "tx", "0a00"));
    gd_rpc_request_free(&r);

    r = body(REQ("broadcast_tx_async", "[\"\"]"));
    CHECK(call_ok(one(&r), "broadcast_tx_async"));
    CHECK(bytes_param(one(&r), "tx", "")); /* present, empty */
    CHECK(one(&r)->params[0].bytes == NULL);
    gd_rpc_request_free(&r);

    r = body(REQ("tx", "[\"AAEC\",true]"));
    CHECK(call_ok(one(&r), "tx"));
    CHECK(bytes_param(one(&r), "hash", "000102"));
    CHECK(bool_param(one(&r), "prove", true));
    gd_rpc_request_free(&r);

    r = body(REQ("tx_search", "[\"tx.height>1\",false,\"2\",10,\"desc\"]"));
    c = one(&r);
    CHECK(call_ok(c, "tx_search"));
    CHECK(str_param(c, "query", "tx.height>1"));
    CHECK(i64_param(c, "page", 2));
    CHECK(i64_param(c, "per_page", 10));
    CHECK(str_param(c, "order_by", "desc"));
    gd_rpc_request_free(&r);

    r = body(REQ("block", "[\"3\"]"));
    CHECK(i64_param(one(&r), "height", 3));
    gd_rpc_request_free(&r);
    r = body(REQ("block_results", "[null]"));
    CHECK(call_ok(one(&r), "block_results"));
    CHECK(!param(one(&r), "height")->present);
    gd_rpc_request_free(&r);

    /* Fewer than declared: the trailing ones are absent. */
    r = body(REQ("abci_query", "[\"/p\"]"));
    c = one(&r);
    CHECK(call_ok(c, "abci_query"));
    CHECK(str_param(c, "path", "/p"));
    CHECK(!param(c, "data")->present && !param(c, "height")->present);
    gd_rpc_request_free(&r);

    CHECK(body_err(REQ("tx", "[\"AAEC\",true,1]"), GD_RPC_ERR_INVALID_PARAMS, "at most 2"));
    CHECK(body_err(REQ("status", "[1]"), GD_RPC_ERR_INVALID_PARAMS, "at most 0"));
    CHECK(body_err(REQ("tx", "[true]"), GD_RPC_ERR_INVALID_PARAMS, "hash"));
}

static void test_uri_every_method(void) {
    const char *noargs[] = {"health", "status", "abci_info", "genesis", "num_unconfirmed_txs"};
    for (size_t i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "/%s", noargs[i]);
        gd_rpc_request r = uri(path, NULL);
        CHECK(call_ok(one(&r), noargs[i]));
        CHECK(json_is_null(one(&r)->id));
        gd_rpc_request_free(&r);
        r = uri(path, "");
        CHECK(call_ok(one(&r), noargs[i]));
        gd_rpc_request_free(&r);
    }
    gd_rpc_request r =
        uri("/abci_query", "path=\"/cosmos.bank.v1beta1.Query/Balance\"&data=0x0a02&height=0&prove=false");
    const gd_incoming_call *c = one(&r);
    CHECK(call_ok(c, "abci_query"));
    CHECK(str_param(c, "path", "/cosmos.bank.v1beta1.Query/Balance"));
    CHECK(bytes_param(c, "data", "0a02"));
    CHECK(i64_param(c, "height", 0));
    CHECK(bool_param(c, "prove", false));
    gd_rpc_request_free(&r);

    r = uri("/broadcast_tx_sync", "tx=0x0a00");
    CHECK(call_ok(one(&r), "broadcast_tx_sync"));
    CHECK(bytes_param(one(&r), "tx", "0a00"));
    gd_rpc_request_free(&r);
    r = uri("/broadcast_tx_async", "tx=0X0A0B");
    CHECK(call_ok(one(&r), "broadcast_tx_async"));
    CHECK(bytes_param(one(&r), "tx", "0a0b"));
    gd_rpc_request_free(&r);

    r = uri("/tx", "hash=0xABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789&prove=true");
    CHECK(call_ok(one(&r), "tx"));
    CHECK(bytes_param(one(&r), "hash", "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"));
    CHECK(bool_param(one(&r), "prove", true));
    gd_rpc_request_free(&r);

    r = uri("/tx_search", "query=\"tx.height=5\"&page=1&per_page=30&order_by=\"desc\"&prove=false");
    c = one(&r);
    CHECK(call_ok(c, "tx_search"));
    CHECK(str_param(c, "query", "tx.height=5"));
    CHECK(i64_param(c, "page", 1));
    CHECK(i64_param(c, "per_page", 30));
    CHECK(str_param(c, "order_by", "desc"));
    CHECK(bool_param(c, "prove", false));
    gd_rpc_request_free(&r);

    r = uri("/block", "height=42");
    CHECK(call_ok(one(&r), "block"));
    CHECK(i64_param(one(&r), "height", 42));
    gd_rpc_request_free(&r);
    r = uri("/block_results", "height=-3");
    CHECK(call_ok(one(&r), "block_results"));
    CHECK(i64_param(one(&r), "height", -3));
    gd_rpc_request_free(&r);
    r = uri("/block", NULL);
    CHECK(call_ok(one(&r), "block"));
    CHECK(!param(one(&r), "height")->present);
    gd_rpc_request_free(&r);
}

static void test_int64(void) {
    gd_rpc_request r = body(REQ("block", "{\"height\":\"9223372036854775807\"}"));
    CHECK(i64_param(one(&r), "height", INT64_MAX));
    gd_rpc_request_free(&r);
    r = body(REQ("block", "{\"height\":\"-9223372036854775808\"}"));
    CHECK(i64_param(one(&r), "height", INT64_MIN));
    gd_rpc_request_free(&r);
    r = body(REQ("block", "{\"height\":-4}"));
    CHECK(i64_param(one(&r), "height", -4));
    gd_rpc_request_free(&r);
    r = body(REQ("block", "{\"height\":\"0\"}"));
    CHECK(i64_param(one(&r), "height", 0));
    gd_rpc_request_free(&r);
    r = body(REQ("block", "{\"height\":\"+007\"}")); /* strconv.ParseInt takes these */
    CHECK(i64_param(one(&r), "height", 7));
    gd_rpc_request_free(&r);
    CHECK(body_err(REQ("block", "{\"height\":\"+-7\"}"), GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(body_err(REQ("block", "{\"height\":\"+\"}"), GD_RPC_ERR_INVALID_PARAMS, "height"));

    CHECK(body_err(REQ("block", "{\"height\":\"x\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "height: invalid 64-bit integer \"x\""));
    CHECK(body_err(REQ("block", "{\"height\":true}"), GD_RPC_ERR_INVALID_PARAMS,
                   "height: invalid 64-bit integer encoding true, expected string"));
    CHECK(body_err(REQ("block", "{\"height\":1.5}"), GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(body_err(REQ("block", "{\"height\":\"1.5\"}"), GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(body_err(REQ("block", "{\"height\":\"\"}"), GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(body_err(REQ("block", "{\"height\":\" 5\"}"), GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(body_err(REQ("block", "{\"height\":\"9223372036854775808\"}"),
                   GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(body_err(REQ("block", "{\"height\":[5]}"), GD_RPC_ERR_INVALID_PARAMS,
                   "encoding an array"));
    CHECK(body_err(REQ("tx_search", "{\"query\":\"a\",\"page\":{}}"), GD_RPC_ERR_INVALID_PARAMS,
                   "page:"));

    /* URI: bare digits, a quoted integer, nothing else. */
    r = uri("/block", "height=%225%22");
    CHECK(i64_param(one(&r), "height", 5));
    gd_rpc_request_free(&r);
    r = uri("/block", "height=\"5\"");
    CHECK(i64_param(one(&r), "height", 5));
    gd_rpc_request_free(&r);
    CHECK(uri_err("/block", "height=abc", GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(uri_err("/block", "height=0x10", GD_RPC_ERR_INVALID_PARAMS, "hex"));
    CHECK(uri_err("/block", "height=\"x\"", GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(uri_err("/block", "height=-", GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK(uri_err("/block", "height=99999999999999999999", GD_RPC_ERR_INVALID_PARAMS,
                  "out of range"));
    CHECK(uri_err("/block", "height=1.0", GD_RPC_ERR_INVALID_PARAMS, "height"));
}

static void test_bool(void) {
    gd_rpc_request r = body(REQ("tx", "{\"hash\":\"AA==\",\"prove\":true}"));
    CHECK(bool_param(one(&r), "prove", true));
    gd_rpc_request_free(&r);
    CHECK(body_err(REQ("tx", "{\"prove\":\"true\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "prove: expected true or false, got \"true\""));
    CHECK(body_err(REQ("tx", "{\"prove\":1}"), GD_RPC_ERR_INVALID_PARAMS, "prove"));
    r = uri("/tx", "prove=true");
    CHECK(bool_param(one(&r), "prove", true));
    gd_rpc_request_free(&r);
    CHECK(uri_err("/tx", "prove=yes", GD_RPC_ERR_INVALID_PARAMS, "prove"));
    CHECK(uri_err("/tx", "prove=True", GD_RPC_ERR_INVALID_PARAMS, "prove"));
    CHECK(uri_err("/tx", "prove=\"true\"", GD_RPC_ERR_INVALID_PARAMS, "prove"));
    CHECK(uri_err("/tx", "prove=0x01", GD_RPC_ERR_INVALID_PARAMS, "prove"));
}

static void test_base64(void) {
    gd_rpc_request r = body(REQ("broadcast_tx_sync", "{\"tx\":\"/+8=\"}"));
    CHECK(bytes_param(one(&r), "tx", "ffef"));
    gd_rpc_request_free(&r);
    CHECK(body_err(REQ("broadcast_tx_sync", "{\"tx\":\"CgB=\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "tx: invalid base64"));                          /* non-canonical bits */
    CHECK(body_err(REQ("broadcast_tx_sync", "{\"tx\":\"CgA\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "tx: invalid base64"));                          /* no padding */
    CHECK(body_err(REQ("broadcast_tx_sync", "{\"tx\":\"Cg-_\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "tx: invalid base64"));                          /* URL alphabet */
    CHECK(body_err(REQ("broadcast_tx_sync", "{\"tx\":\"Cg A=\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "tx"));
    CHECK(body_err(REQ("broadcast_tx_sync", "{\"tx\":\"0x0a00\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "tx"));
    CHECK(body_err(REQ("broadcast_tx_sync", "{\"tx\":[10,0]}"), GD_RPC_ERR_INVALID_PARAMS,
                   "expected a base64 string"));
    CHECK(body_err(REQ("tx", "{\"hash\":\"AB==\"}"), GD_RPC_ERR_INVALID_PARAMS, "hash"));
}

static void test_hex(void) {
    gd_rpc_request r = body(REQ("abci_query", "{\"data\":\"DEADbeef\"}"));
    CHECK(bytes_param(one(&r), "data", "deadbeef"));
    gd_rpc_request_free(&r);
    r = body(REQ("abci_query", "{\"data\":\"\"}"));
    CHECK(bytes_param(one(&r), "data", ""));
    gd_rpc_request_free(&r);
    CHECK(body_err(REQ("abci_query", "{\"data\":\"abc\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "data: invalid hex \"abc\": hex string has odd length 3"));
    CHECK(body_err(REQ("abci_query", "{\"data\":\"zz\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "data: invalid hex"));
    CHECK(body_err(REQ("abci_query", "{\"data\":\"0x0a\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "data: invalid hex"));
    CHECK(body_err(REQ("abci_query", "{\"data\":10}"), GD_RPC_ERR_INVALID_PARAMS,
                   "data: expected a hex string, got 10"));
    CHECK(uri_err("/abci_query", "data=0xabc", GD_RPC_ERR_INVALID_PARAMS, "odd length"));
    CHECK(uri_err("/abci_query", "data=0xgg", GD_RPC_ERR_INVALID_PARAMS, "data"));
    CHECK(uri_err("/abci_query", "data=0a02", GD_RPC_ERR_INVALID_PARAMS,
                  "expected 0x-hex or a quoted string"));
}

static void test_uri_forms(void) {
    /* Percent-decoding of names and values; '+' is a space, as in Go's
     * url.ParseQuery. */
    gd_rpc_request r = uri("/abci_query", "pa%74h=%22%2Fcosmos.bank.v1beta1.Query%2FBalance%22&"
                                          "data=%30x0a02");
    const gd_incoming_call *c = one(&r);
    CHECK(call_ok(c, "abci_query"));
    CHECK(str_param(c, "path", "/cosmos.bank.v1beta1.Query/Balance"));
    CHECK(bytes_param(c, "data", "0a02"));
    gd_rpc_request_free(&r);

    r = uri("/tx_search", "query=%22message.sender%3D%27gonka1abc%27+AND+tx.height%3E5%22");
    CHECK(str_param(one(&r), "query", "message.sender='gonka1abc' AND tx.height>5"));
    gd_rpc_request_free(&r);

    /* Quoted strings are JSON string literals; 0x-hex gives the bytes. */
    r = uri("/tx_search", "query=\"a\\\"b\\u00e9\"");
    CHECK(str_param(one(&r), "query", "a\"b\xc3\xa9"));
    gd_rpc_request_free(&r);
    r = uri("/tx_search", "query=0x74782e6865696768743d35");
    CHECK(str_param(one(&r), "query", "tx.height=5"));
    gd_rpc_request_free(&r);
    r = uri("/tx_search", "query=\"\"");
    CHECK(str_param(one(&r), "query", ""));
    gd_rpc_request_free(&r);

    /* Bytes from a quoted string are its raw bytes, not base64. */
    r = uri("/broadcast_tx_sync", "tx=\"abc\"");
    CHECK(bytes_param(one(&r), "tx", "616263"));
    gd_rpc_request_free(&r);
    r = uri("/broadcast_tx_sync", "tx=0x");
    CHECK(bytes_param(one(&r), "tx", ""));
    gd_rpc_request_free(&r);
    r = uri("/abci_query", "data=\"\\u0001x\"");
    CHECK(bytes_param(one(&r), "data", "0178"));
    gd_rpc_request_free(&r);

    /* Empty values, "null", bare names: absent. Repeated names: first wins. */
    r = uri("/abci_query", "path=&height=null&prove&&data=0x01&data=0x02");
    c = one(&r);
    CHECK(call_ok(c, "abci_query"));
    CHECK(!param(c, "path")->present && !param(c, "height")->present);
    CHECK(!param(c, "prove")->present);
    CHECK(bytes_param(c, "data", "01"));
    gd_rpc_request_free(&r);
    r = uri("/block", "height=&height=5");
    CHECK(call_ok(one(&r), "block"));
    CHECK(!param(one(&r), "height")->present);
    gd_rpc_request_free(&r);

    /* Percent-decoded path. */
    r = uri("/st%61tus", NULL);
    CHECK(call_ok(one(&r), "status"));
    gd_rpc_request_free(&r);

    CHECK(uri_err("/tx_search", "query=tx.height=5", GD_RPC_ERR_INVALID_PARAMS,
                  "query: a string must be quoted"));
    CHECK(uri_err("/abci_query", "path=/a.b/C", GD_RPC_ERR_INVALID_PARAMS, "path"));
    CHECK(uri_err("/tx_search", "query=\"unterminated", GD_RPC_ERR_INVALID_PARAMS, "query"));
    CHECK(uri_err("/tx_search", "query=\"a\"b\"", GD_RPC_ERR_INVALID_PARAMS, "query"));
    CHECK(uri_err("/tx_search", "query=\"", GD_RPC_ERR_INVALID_PARAMS, "query"));
    CHECK(uri_err("/tx_search", "query=\"a%00b\"", GD_RPC_ERR_INVALID_PARAMS, "query"));
    CHECK(uri_err("/tx_search", "query=\"a\\u0000b\"", GD_RPC_ERR_INVALID_PARAMS, "query"));
    CHECK(uri_err("/tx_search", "query=0x6100", GD_RPC_ERR_INVALID_PARAMS, "NUL"));
    CHECK(uri_err("/tx_search", "query=0x6", GD_RPC_ERR_INVALID_PARAMS, "query"));
    CHECK(uri_err("/tx_search", "query=%zz", GD_RPC_ERR_INVALID_PARAMS, "percent"));
    CHECK(uri_err("/tx_search", "query=%2", GD_RPC_ERR_INVALID_PARAMS, "percent"));
    CHECK(uri_err("/tx_search", "query=\"a\"&x%=1", GD_RPC_ERR_INVALID_PARAMS, "percent"));
    CHECK(uri_err("/block", "heigth=5", GD_RPC_ERR_INVALID_PARAMS,
                  "unknown parameter \"heigth\" for block (takes height)"));
    CHECK(uri_err("/status", "x=1", GD_RPC_ERR_INVALID_PARAMS, "takes none"));
    CHECK(uri_err("/broadcast_tx_sync", "tx=CgA=", GD_RPC_ERR_INVALID_PARAMS, "tx"));

    /* Unknown paths. */
    CHECK(uri_err("/nope", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, "nope"));
    CHECK(uri_err("/", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    CHECK(uri_err("", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    CHECK(uri_err(NULL, NULL, GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    CHECK(uri_err("status", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    CHECK(uri_err("/status/", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    CHECK(uri_err("/status%00", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, "/status%00"));
    CHECK(uri_err("/sta%tus", NULL, GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    r = uri("/nope", "height=x");
    CHECK(one(&r)->method == NULL && one(&r)->error_code == GD_RPC_ERR_METHOD_NOT_FOUND);
    gd_rpc_request_free(&r);
}

static void test_envelope_errors(void) {
    CHECK(body_err("not json", GD_RPC_ERR_PARSE, "error unmarshaling request"));
    CHECK(body_err("", GD_RPC_ERR_PARSE, NULL));
    CHECK(body_err("{\"method\":\"status\"", GD_RPC_ERR_PARSE, NULL));
    CHECK(body_err("{\"id\":1,\"id\":2,\"method\":\"status\"}", GD_RPC_ERR_PARSE, "duplicate"));
    CHECK(body_err(REQ("block", "{\"height\":\"1\",\"height\":\"2\"}"), GD_RPC_ERR_PARSE, NULL));
    CHECK(body_err("5", GD_RPC_ERR_INVALID_REQUEST, "object"));
    CHECK(body_err("\"status\"", GD_RPC_ERR_INVALID_REQUEST, NULL));
    CHECK(body_err("null", GD_RPC_ERR_INVALID_REQUEST, NULL));
    CHECK(body_err("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"status\"}",
                   GD_RPC_ERR_INVALID_REQUEST, "jsonrpc"));
    CHECK(body_err("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"status\"}",
                   GD_RPC_ERR_INVALID_REQUEST, "jsonrpc"));
    CHECK(body_err("{\"jsonrpc\":\"2.0\",\"id\":1}", GD_RPC_ERR_INVALID_REQUEST, "method"));
    CHECK(body_err("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", GD_RPC_ERR_INVALID_REQUEST,
                   "method"));
    CHECK(body_err("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"status\"}",
                   GD_RPC_ERR_INVALID_REQUEST, "id"));
    CHECK(body_err("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}",
                   GD_RPC_ERR_METHOD_NOT_FOUND, "nope"));
    CHECK(body_err("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":[]}",
                   GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    /* The method is checked before params. */
    CHECK(body_err("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\",\"params\":7}",
                   GD_RPC_ERR_METHOD_NOT_FOUND, NULL));

    gd_rpc_request r = body("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}");
    CHECK_STR_EQ(one(&r)->error_message, "Method not found");
    CHECK(one(&r)->method == NULL);
    CHECK(json_integer_value(one(&r)->id) == 1); /* the id survives errors */
    gd_rpc_request_free(&r);
    r = body("[}");
    CHECK_STR_EQ(one(&r)->error_message, "Parse error");
    CHECK(json_is_null(one(&r)->id));
    gd_rpc_request_free(&r);
    r = body("{\"jsonrpc\":\"3\",\"id\":\"x\",\"method\":\"status\"}");
    CHECK_STR_EQ(one(&r)->error_message, "Invalid Request");
    CHECK_STR_EQ(json_string_value(one(&r)->id), "x");
    gd_rpc_request_free(&r);

    /* Non-ASCII in a reason is escaped: the data is one printable line. */
    r = body("{\"method\":\"\xc3\xa9\\n\"}");
    CHECK(call_err(one(&r), GD_RPC_ERR_METHOD_NOT_FOUND, "\"\\xc3\\xa9\\x0a\""));
    gd_rpc_request_free(&r);
    r = body("\xff\xfe garbage");
    CHECK(one(&r)->error_code == GD_RPC_ERR_PARSE);
    for (const char *p = one(&r)->error_data; *p; p++)
        CHECK(*p >= 0x20 && *p <= 0x7e);
    gd_rpc_request_free(&r);

    /* A NULL body is an empty one. */
    CHECK_OK(gd_rpc_request_parse_body(&r, NULL, 0));
    CHECK(one(&r)->error_code == GD_RPC_ERR_PARSE);
    gd_rpc_request_free(&r);
}

static void test_ids(void) {
    gd_rpc_request r = body("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"status\"}");
    CHECK(call_ok(one(&r), "status"));
    CHECK(json_is_integer(one(&r)->id) && json_integer_value(one(&r)->id) == 42);
    gd_rpc_request_free(&r);
    r = body("{\"jsonrpc\":\"2.0\",\"id\":\"abc-1\",\"method\":\"status\"}");
    CHECK_STR_EQ(json_string_value(one(&r)->id), "abc-1");
    gd_rpc_request_free(&r);
    r = body("{\"jsonrpc\":\"2.0\",\"id\":-1.5,\"method\":\"status\"}");
    CHECK(json_is_real(one(&r)->id));
    gd_rpc_request_free(&r);
    /* Missing jsonrpc is accepted; missing or null id is JSON null. */
    r = body("{\"method\":\"status\"}");
    CHECK(call_ok(one(&r), "status"));
    CHECK(one(&r)->id != NULL && json_is_null(one(&r)->id));
    gd_rpc_request_free(&r);
    r = body("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"health\"}");
    CHECK(call_ok(one(&r), "health"));
    CHECK(json_is_null(one(&r)->id));
    gd_rpc_request_free(&r);
    /* The id outlives the parsed document: the call holds its own reference. */
    r = body("{\"jsonrpc\":\"2.0\",\"id\":\"keep\",\"method\":\"health\"}");
    json_t *id = json_incref(one(&r)->id);
    gd_rpc_request_free(&r);
    CHECK_STR_EQ(json_string_value(id), "keep");
    json_decref(id);
}

static void test_params_shape(void) {
    gd_rpc_request r = body(REQ("block", "null"));
    CHECK(call_ok(one(&r), "block"));
    CHECK(!param(one(&r), "height")->present);
    gd_rpc_request_free(&r);
    r = body("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"block\"}");
    CHECK(call_ok(one(&r), "block"));
    CHECK(!param(one(&r), "height")->present);
    gd_rpc_request_free(&r);
    r = body(REQ("block", "{\"height\":null}"));
    CHECK(call_ok(one(&r), "block"));
    CHECK(!param(one(&r), "height")->present);
    gd_rpc_request_free(&r);
    r = body(REQ("status", "{}"));
    CHECK(call_ok(one(&r), "status"));
    gd_rpc_request_free(&r);

    CHECK(body_err(REQ("block", "\"5\""), GD_RPC_ERR_INVALID_PARAMS,
                   "params must be an object or an array"));
    CHECK(body_err(REQ("block", "5"), GD_RPC_ERR_INVALID_PARAMS, "params"));
    CHECK(body_err(REQ("block", "true"), GD_RPC_ERR_INVALID_PARAMS, "params"));
    CHECK(body_err(REQ("block", "{\"heigth\":\"5\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "unknown parameter \"heigth\" for block (takes height)"));
    CHECK(body_err(REQ("status", "{\"height\":\"5\"}"), GD_RPC_ERR_INVALID_PARAMS,
                   "takes none"));
    CHECK(body_err(REQ("abci_query", "{\"path\":5}"), GD_RPC_ERR_INVALID_PARAMS,
                   "path: expected a string, got 5"));
    CHECK(body_err(REQ("abci_query", "{\"path\":{\"a\":1}}"), GD_RPC_ERR_INVALID_PARAMS,
                   "path: expected a string"));
    CHECK(body_err(REQ("abci_query", "{\"path\":\"a\\u0000b\"}"), GD_RPC_ERR_PARSE, NULL));

    /* A bad param after good ones leaves nothing half-parsed, method kept. */
    r = body(REQ("abci_query", "{\"path\":\"/p\",\"data\":\"00\",\"height\":\"h\"}"));
    const gd_incoming_call *c = one(&r);
    CHECK(call_err(c, GD_RPC_ERR_INVALID_PARAMS, "height"));
    CHECK_STR_EQ(c->error_message, "Invalid params");
    CHECK(c->method != NULL && strcmp(c->method->name, "abci_query") == 0);
    CHECK(c->params[0].str == NULL && c->params[1].bytes == NULL);
    gd_rpc_request_free(&r);
}

static void test_batch(void) {
    gd_rpc_request r = body("[" REQ("status", "{}") ","
                            "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"block\","
                            "\"params\":{\"height\":\"oops\"}},"
                            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"block\","
                            "\"params\":[\"8\"]}]");
    CHECK(r.batch);
    CHECK(r.n_calls == 3);
    if (r.n_calls == 3) {
        CHECK(call_ok(&r.calls[0], "status"));
        CHECK(json_integer_value(r.calls[0].id) == 1);
        CHECK(call_err(&r.calls[1], GD_RPC_ERR_INVALID_PARAMS, "height"));
        CHECK_STR_EQ(json_string_value(r.calls[1].id), "b");
        CHECK(call_ok(&r.calls[2], "block"));
        CHECK(i64_param(&r.calls[2], "height", 8));
        CHECK(json_integer_value(r.calls[2].id) == 3);
    }
    gd_rpc_request_free(&r);

    /* Elements that are not requests fail alone. */
    r = body("[1, " REQ("health", "[]") ", {\"method\":\"x\"}]");
    CHECK(r.batch && r.n_calls == 3);
    if (r.n_calls == 3) {
        CHECK(call_err(&r.calls[0], GD_RPC_ERR_INVALID_REQUEST, NULL));
        CHECK(call_ok(&r.calls[1], "health"));
        CHECK(call_err(&r.calls[2], GD_RPC_ERR_METHOD_NOT_FOUND, NULL));
    }
    gd_rpc_request_free(&r);

    /* A batch of one is still a batch (answered with an array). */
    r = body("[" REQ("health", "{}") "]");
    CHECK(r.batch && r.n_calls == 1);
    gd_rpc_request_free(&r);

    /* Empty and oversize batches: one error, answered as a single object. */
    CHECK(body_err("[]", GD_RPC_ERR_INVALID_REQUEST, "empty batch"));
    char big[(GD_RPC_MAX_BATCH + 1) * 32 + 8];
    for (int n = GD_RPC_MAX_BATCH; n <= GD_RPC_MAX_BATCH + 1; n++) {
        size_t o = 0;
        big[o++] = '[';
        for (int i = 0; i < n; i++)
            o += (size_t)snprintf(big + o, sizeof big - o, "%s{\"id\":%d,\"method\":\"health\"}",
                                  i ? "," : "", i);
        big[o++] = ']';
        big[o] = '\0';
        if (n == GD_RPC_MAX_BATCH) {
            r = body(big);
            CHECK(r.batch && r.n_calls == GD_RPC_MAX_BATCH);
            CHECK(call_ok(&r.calls[GD_RPC_MAX_BATCH - 1], "health"));
            gd_rpc_request_free(&r);
        } else {
            CHECK(body_err(big, GD_RPC_ERR_INVALID_REQUEST, "exceeds the limit of 100"));
        }
    }
}

/* jansson's allocations failing one after the other: every parse either
 * answers or fails with GD_ERR_NOMEM and leaves nothing allocated (under
 * LeakSanitizer), and some budget lets it through. */
static long alloc_budget;

static void *failing_malloc(size_t n) {
    if (alloc_budget <= 0)
        return NULL;
    alloc_budget--;
    return malloc(n);
}

static void test_out_of_memory(void) {
    const char *text = "[" REQ("tx_search", "{\"query\":\"tx.height=5\",\"page\":\"1\"}") ","
                       REQ("broadcast_tx_sync", "[\"CgA=\"]") ",{\"id\":\"x\",\"method\":\"nope\"}]";
    int nomem = 0, ok = 0;
    for (long budget = 0; budget < 400 && !ok; budget++) {
        gd_rpc_request r;
        alloc_budget = budget;
        json_set_alloc_funcs(failing_malloc, free);
        gd_status s = gd_rpc_request_parse_body(&r, text, strlen(text));
        json_set_alloc_funcs(malloc, free);
        CHECK(s == GD_OK || s == GD_ERR_NOMEM);
        if (s == GD_ERR_NOMEM) {
            nomem++;
            CHECK(r.calls == NULL && r.n_calls == 0);
        } else if (s == GD_OK) {
            CHECK(r.n_calls >= 1 && r.calls != NULL);
            ok = r.batch && r.n_calls == 3 && r.calls[0].error_code == 0;
        }
        gd_rpc_request_free(&r);
    }
    CHECK(nomem > 0 && ok);
    ok = 0;
    for (long budget = 0; budget < 100 && !ok; budget++) {
        gd_rpc_request r;
        alloc_budget = budget;
        json_set_alloc_funcs(failing_malloc, free);
        gd_status s = gd_rpc_request_parse_uri(&r, "/tx_search", "query=\"a%20b\"&order_by=\"asc\"");
        json_set_alloc_funcs(malloc, free);
        CHECK(s == GD_OK || s == GD_ERR_NOMEM);
        if (s == GD_OK)
            ok = r.calls[0].error_code == 0 && str_param(&r.calls[0], "query", "a b");
        else
            CHECK(r.calls == NULL && r.n_calls == 0);
        gd_rpc_request_free(&r);
    }
    CHECK(ok);
}

static void test_free(void) {
    gd_rpc_request r;
    memset(&r, 0, sizeof r);
    gd_rpc_request_free(&r);
    gd_rpc_request_free(&r);
    gd_rpc_request_free(NULL);
    r = body(REQ("abci_query", "{\"path\":\"/p\",\"data\":\"00ff\"}"));
    gd_rpc_request_free(&r);
    CHECK(r.calls == NULL && r.n_calls == 0 && !r.batch);
    gd_rpc_request_free(&r);
}

int main(void) {
    RUN_TEST(test_method_table);
    RUN_TEST(test_json_named);
    RUN_TEST(test_json_positional);
    RUN_TEST(test_uri_every_method);
    RUN_TEST(test_int64);
    RUN_TEST(test_bool);
    RUN_TEST(test_base64);
    RUN_TEST(test_hex);
    RUN_TEST(test_uri_forms);
    RUN_TEST(test_envelope_errors);
    RUN_TEST(test_ids);
    RUN_TEST(test_params_shape);
    RUN_TEST(test_batch);
    RUN_TEST(test_out_of_memory);
    RUN_TEST(test_free);
    return gd_test_finish();
}
