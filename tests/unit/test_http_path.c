/* The HTTP server's pure parts: request targets (plugin/http/http_path.c) with
 * every path kind, number bounds and refused spellings; Range values
 * (plugin/http/http_range.c) as RFC 9110 reads them, numbers past 2^64
 * included; and the per-address token buckets (plugin/http/http_rate.c) on a
 * clock driven by hand. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/http/http_path.h"
#include "plugin/http/http_range.h"
#include "plugin/http/http_rate.h"
#include "tests/support/testkit.h"

/* Parses a GET of url, expecting success. */
static gd_artifact_req parse_ok(const char *url) {
    gd_artifact_req req;
    unsigned code = 0;
    gd_status s = gd_http_path_parse(&req, "GET", url, &code);
    if (s != GD_OK || code != 200) {
        fprintf(stderr, "  %s: %s (%u) %s\n", url, gd_status_name(s), code, gd_error_detail());
        gd_test_failures++;
        memset(&req, 0, sizeof req);
    }
    return req;
}

/* The HTTP status a GET of url is refused with (200 if accepted). */
static unsigned refused(const char *method, const char *url) {
    gd_artifact_req req;
    memset(&req, 0xa5, sizeof req);
    unsigned code = 0;
    gd_status s = gd_http_path_parse(&req, method, url, &code);
    if (s == GD_OK)
        return 200;
    /* Nothing is written on failure, and the detail never quotes the url. */
    gd_artifact_req untouched;
    memset(&untouched, 0xa5, sizeof untouched);
    CHECK(memcmp(&req, &untouched, sizeof req) == 0);
    CHECK(url == NULL || strlen(url) < 4 || strstr(gd_error_detail(), url) == NULL);
    return code;
}

static void test_every_path_kind(void) {
    gd_artifact_req r = parse_ok("/v1/status");
    CHECK(r.kind == GD_REQ_STATUS);
    CHECK(parse_ok("/metrics").kind == GD_REQ_METRICS);
    r = parse_ok("/v1/runs/18446744073709551615/rounds/0/payload");
    CHECK(r.kind == GD_REQ_PAYLOAD && r.run == UINT64_MAX && r.round == 0);
    r = parse_ok("/v1/runs/7/rounds/3/payload/chunks/4294967295");
    CHECK(r.kind == GD_REQ_PAYLOAD_CHUNK && r.run == 7 && r.round == 3 && r.chunk == UINT32_MAX);
    r = parse_ok("/v1/runs/7/rounds/3/payloads/12");
    CHECK(r.kind == GD_REQ_PEER_PAYLOAD && r.run == 7 && r.round == 3 && r.leaf == 12);
    char formatted[128];
    gd_http_path_format(&r, formatted, sizeof formatted);
    CHECK(strcmp(formatted, "/v1/runs/7/rounds/3/payloads/12") == 0);
    r = parse_ok("/v1/runs/1/rounds/18446744073709551615/transcript");
    CHECK(r.kind == GD_REQ_TRANSCRIPT && r.run == 1 && r.round == UINT64_MAX);
    r = parse_ok("/v1/runs/2/rounds/9/states/4294967295");
    CHECK(r.kind == GD_REQ_STATE && r.run == 2 && r.round == 9 && r.leaf == UINT32_MAX);
    r = parse_ok("/v1/runs/2/rounds/9/states/10/chunks/0");
    CHECK(r.kind == GD_REQ_STATE_CHUNK && r.leaf == 10 && r.chunk == 0);
    r = parse_ok("/v1/runs/5/global/6/chunks/12");
    CHECK(r.kind == GD_REQ_GLOBAL_CHUNK && r.run == 5 && r.round == 6 && r.chunk == 12);
    r = parse_ok("/v1/runs/0/checkpoint.safetensors");
    CHECK(r.kind == GD_REQ_CHECKPOINT && r.run == 0);
    CHECK(parse_ok("/").kind == GD_REQ_PAGE);
    CHECK(parse_ok("/?").kind == GD_REQ_PAGE);
    /* An empty query is no query. */
    CHECK(parse_ok("/v1/status?").kind == GD_REQ_STATUS);
    unsigned code = 0;
    CHECK_OK(gd_http_path_parse(&r, "HEAD", "/metrics", &code));
}

static void test_methods(void) {
    CHECK(refused("POST", "/v1/status") == 405);
    CHECK(refused("PUT", "/v1/status") == 405);
    CHECK(refused("get", "/v1/status") == 405);
    CHECK(refused("OPTIONS", "*") == 405);
    CHECK(refused("", "/v1/status") == 405);
    CHECK(refused(NULL, "/v1/status") == 405);
    CHECK(refused("GET", NULL) == 400);
}

static void test_numbers(void) {
    CHECK(refused("GET", "/v1/runs/18446744073709551616/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/99999999999999999999/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/states/4294967296") == 400);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/payload/chunks/4294967296") == 400);
    CHECK(refused("GET", "/v1/runs/01/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/1/rounds/00/payload") == 400);
    CHECK(refused("GET", "/v1/runs/+1/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/-1/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/1a/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/0x1/rounds/0/payload") == 400);
    CHECK(refused("GET", "/v1/runs/x/checkpoint.safetensors") == 400);
    CHECK(refused("GET", "/v1/runs/1/global/1/chunks/1e3") == 400);
}

static void test_refused_spellings(void) {
    CHECK(refused("GET", "/v1/runs/1/rounds/0/../../../etc/passwd") == 400);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/%2e%2e/payload") == 400);
    CHECK(refused("GET", "/v1/%73tatus") == 400);
    CHECK(refused("GET", "//v1/status") == 400);
    CHECK(refused("GET", "/v1//status") == 400);
    CHECK(refused("GET", "/v1/status/") == 400);
    CHECK(refused("GET", "/v1/runs/1/checkpoint..safetensors") == 400);
    CHECK(refused("GET", "/v1/status?x=1") == 400);
    CHECK(refused("GET", "/v1/status??") == 400);
    CHECK(refused("GET", "/v1/status?#") == 400);
    CHECK(refused("GET", "/v1/stat us") == 400);
    CHECK(refused("GET", "/v1/stat\tus") == 400);
    CHECK(refused("GET", "/v1/stat\x7fus") == 400);
    CHECK(refused("GET", "/v1/stat\xc3\xa9") == 400);
    CHECK(refused("GET", "v1/status") == 400);
    CHECK(refused("GET", "http://host/v1/status") == 400);
    CHECK(refused("GET", "") == 400);
    CHECK(refused("GET", "?") == 400);
}

static void test_unknown_paths(void) {
    CHECK(refused("GET", "//") == 400);
    CHECK(refused("GET", "/V1/status") == 404);
    CHECK(refused("GET", "/v1/./status") == 404);
    CHECK(refused("GET", "/v1") == 404);
    CHECK(refused("GET", "/v1/runs/1") == 404);
    CHECK(refused("GET", "/v1/runs/1/rounds/0") == 404);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/payload/chunks") == 404);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/payload/chunks/1/x") == 404);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/payloads") == 404);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/payloads/gonka1abc") == 400);
    CHECK(refused("GET", "/v1/runs/1/rounds/0/states/1/chunks/1/x/y") == 404);
    CHECK(refused("GET", "/a/b/c/d/e/f/g/h/i/j/k/l") == 404);
    CHECK(refused("GET", "/v1/runs/1/checkpoint.safetensor") == 404);
    CHECK(refused("GET", "/v1/runs/1/global/1/chunk/1") == 404);
    CHECK(refused("GET", "/metrics.txt") == 404);
}

static void test_length(void) {
    char url[GD_HTTP_PATH_MAX + 8];
    memset(url, 'a', sizeof url);
    url[0] = '/';
    url[GD_HTTP_PATH_MAX] = '\0'; /* exactly the limit: judged on its path */
    CHECK(refused("GET", url) == 404);
    url[GD_HTTP_PATH_MAX] = 'a';
    url[GD_HTTP_PATH_MAX + 1] = '\0';
    CHECK(refused("GET", url) == 414);
}

/* The range parse of value for size; first/last set for partial ones. */
static gd_http_range_kind range(const char *value, uint64_t size, uint64_t *first,
                                uint64_t *last) {
    gd_http_range r = {.first = 12345, .last = 54321};
    gd_http_range_kind k = gd_http_range_parse(&r, value, size);
    if (k != GD_HTTP_RANGE_PARTIAL)
        CHECK(r.first == 12345 && r.last == 54321);
    *first = r.first;
    *last = r.last;
    return k;
}

static int partial(const char *value, uint64_t size, uint64_t first, uint64_t last) {
    uint64_t a, b;
    if (range(value, size, &a, &b) != GD_HTTP_RANGE_PARTIAL || a != first || b != last) {
        fprintf(stderr, "  %s of %llu: expected %llu-%llu\n", value, (unsigned long long)size,
                (unsigned long long)first, (unsigned long long)last);
        return 0;
    }
    return 1;
}

static gd_http_range_kind kind(const char *value, uint64_t size) {
    uint64_t a, b;
    return range(value, size, &a, &b);
}

static void test_range_single(void) {
    CHECK(partial("bytes=0-4", 10, 0, 4));
    CHECK(partial("bytes=5-", 10, 5, 9));
    CHECK(partial("bytes=9-", 10, 9, 9));
    CHECK(partial("bytes=0-", 10, 0, 9));
    CHECK(partial("bytes=-3", 10, 7, 9));
    CHECK(partial("bytes=-10", 10, 0, 9));
    CHECK(partial("bytes=-20", 10, 0, 9));
    CHECK(partial("bytes=3-3", 10, 3, 3));
    CHECK(partial("bytes=2-100", 10, 2, 9));
    CHECK(partial("bytes=00005-0007", 10, 5, 7)); /* leading zeros are valid here */
    CHECK(partial("BYTES=1-2", 10, 1, 2));        /* the unit is case-insensitive */
    CHECK(partial("  bytes=1-2\t", 10, 1, 2));
    CHECK(partial("bytes=1-2, ,", 10, 1, 2)); /* empty list elements are skipped */
    CHECK(partial("bytes=, 1-2", 10, 1, 2));
}

static void test_range_ignored(void) {
    CHECK(kind(NULL, 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=5-2", 10) == GD_HTTP_RANGE_FULL); /* invalid: last < first */
    CHECK(kind("bytes=0007-5", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=0-1,3-4", 10) == GD_HTTP_RANGE_FULL); /* several: 200 */
    CHECK(kind("bytes=999-,0-0", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("items=1-2", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=,,, ", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=1 -2", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=1- 2", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes =1-2", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=1-2-3", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=a-b", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=--1", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=-", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=1", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=+1-2", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=1-2,x", 10) == GD_HTTP_RANGE_FULL); /* one bad spec spoils the set */
    CHECK(kind("bytes=999999-,x", 10) == GD_HTTP_RANGE_FULL);
}

static void test_range_unsatisfiable(void) {
    CHECK(kind("bytes=999999-", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=10-", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=10-20", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=-0", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=-000", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=999-,888-", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=-0,10-", 10) == GD_HTTP_RANGE_UNSATISFIABLE);
    /* An empty resource: no int-range fits, a non-zero suffix means all of
     * it, which is the plain 200. */
    CHECK(kind("bytes=0-", 0) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=0-0", 0) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=-0", 0) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(kind("bytes=-5", 0) == GD_HTTP_RANGE_FULL);
}

static void test_range_overflow(void) {
    const char *huge = "bytes=99999999999999999999999-";
    CHECK(kind(huge, UINT64_MAX) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(partial("bytes=0-99999999999999999999999", 10, 0, 9));
    CHECK(partial("bytes=-99999999999999999999999", 10, 0, 9));
    /* last < first past 2^64 is still invalid, compared exactly. */
    CHECK(kind("bytes=99999999999999999999999-99999999999999999999998", 10) ==
          GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=18446744073709551616-18446744073709551615", 10) == GD_HTTP_RANGE_FULL);
    CHECK(kind("bytes=18446744073709551616-18446744073709551616", 10) ==
          GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(partial("bytes=18446744073709551614-", UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 1));
    CHECK(kind("bytes=18446744073709551615-", UINT64_MAX) == GD_HTTP_RANGE_UNSATISFIABLE);
    CHECK(partial("bytes=-18446744073709551615", UINT64_MAX, 0, UINT64_MAX - 1));
    CHECK(partial("bytes=-1", UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 1));
    CHECK(partial("bytes=0-18446744073709551615", UINT64_MAX, 0, UINT64_MAX - 1));
}

static void key_v4(const char *ip, uint8_t key[16]) {
    struct sockaddr_in in = {.sin_family = AF_INET};
    CHECK(inet_pton(AF_INET, ip, &in.sin_addr) == 1);
    gd_http_rate_key((const struct sockaddr *)&in, key);
}

static void key_v6(const char *ip, uint8_t key[16]) {
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    CHECK(inet_pton(AF_INET6, ip, &in6.sin6_addr) == 1);
    gd_http_rate_key((const struct sockaddr *)&in6, key);
}

static void test_rate_keys(void) {
    uint8_t a[16], b[16];
    key_v4("127.0.0.1", a);
    key_v6("::ffff:127.0.0.1", b);
    CHECK(memcmp(a, b, 16) == 0);
    key_v4("127.0.0.2", b);
    CHECK(memcmp(a, b, 16) != 0);
    key_v6("2001:db8:1:2::1", a);
    key_v6("2001:db8:1:2:ffff:ffff:ffff:ffff", b);
    CHECK(memcmp(a, b, 16) == 0); /* one /64, one bucket */
    key_v6("2001:db8:1:3::1", b);
    CHECK(memcmp(a, b, 16) != 0);
    gd_http_rate_key(NULL, a);
    CHECK(a[0] == 0 && a[15] == 0);
}

static void test_rate_bucket(void) {
    gd_http_rate *rate = NULL;
    CHECK_STATUS(gd_http_rate_new(&rate, 0, 3), GD_ERR_INVALID);
    CHECK_STATUS(gd_http_rate_new(&rate, 2, 0), GD_ERR_INVALID);
    CHECK_OK(gd_http_rate_new(&rate, 2, 3));
    if (rate == NULL)
        return;
    uint8_t a[16], b[16];
    key_v4("10.0.0.1", a);
    key_v4("10.0.0.2", b);
    uint64_t t = 1000000;
    CHECK(gd_http_rate_take(rate, a, t));
    CHECK(gd_http_rate_take(rate, a, t));
    CHECK(gd_http_rate_take(rate, a, t));
    CHECK(!gd_http_rate_take(rate, a, t)); /* the burst is spent */
    CHECK(gd_http_rate_take(rate, b, t));  /* another address is not */
    CHECK(!gd_http_rate_take(rate, a, t + 499999));
    CHECK(gd_http_rate_take(rate, a, t + 500000)); /* 2/s: one token per 0.5 s */
    CHECK(!gd_http_rate_take(rate, a, t + 500000));
    CHECK(!gd_http_rate_take(rate, a, t + 1)); /* a clock going back adds nothing */
    /* A long quiet spell refills up to the burst, no more. */
    t += 3600ull * 1000000;
    for (int i = 0; i < 3; i++)
        CHECK(gd_http_rate_take(rate, a, t));
    CHECK(!gd_http_rate_take(rate, a, t));
    /* Many addresses: the table stays fixed, every newcomer is served. */
    int served = 0;
    for (uint32_t i = 0; i < 5 * GD_HTTP_RATE_SLOTS; i++) {
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0b000000u + i)};
        uint8_t k[16];
        gd_http_rate_key((const struct sockaddr *)&in, k);
        served += gd_http_rate_take(rate, k, t + i);
    }
    CHECK(served == 5 * GD_HTTP_RATE_SLOTS);
    gd_http_rate_free(rate);
    gd_http_rate_free(NULL);
}

static void test_rate_extremes(void) {
    gd_http_rate *rate = NULL;
    CHECK_OK(gd_http_rate_new(&rate, UINT32_MAX, UINT32_MAX));
    if (rate == NULL)
        return;
    uint8_t a[16];
    key_v4("10.0.0.1", a);
    for (int i = 0; i < 1000; i++)
        CHECK(gd_http_rate_take(rate, a, 5));
    CHECK(gd_http_rate_take(rate, a, UINT64_MAX));
    gd_http_rate_free(rate);
    CHECK_OK(gd_http_rate_new(&rate, 1, UINT32_MAX));
    if (rate == NULL)
        return;
    CHECK(gd_http_rate_take(rate, a, 0));
    CHECK(gd_http_rate_take(rate, a, UINT64_MAX));
    gd_http_rate_free(rate);
}

int main(void) {
    RUN_TEST(test_every_path_kind);
    RUN_TEST(test_methods);
    RUN_TEST(test_numbers);
    RUN_TEST(test_refused_spellings);
    RUN_TEST(test_unknown_paths);
    RUN_TEST(test_length);
    RUN_TEST(test_range_single);
    RUN_TEST(test_range_ignored);
    RUN_TEST(test_range_unsatisfiable);
    RUN_TEST(test_range_overflow);
    RUN_TEST(test_rate_keys);
    RUN_TEST(test_rate_bucket);
    RUN_TEST(test_rate_extremes);
    return gd_test_finish();
}
