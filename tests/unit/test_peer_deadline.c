/* The red-team review's fifth attack, the dripper, against the peer client
 * (plugin/peer_http.c): a peer that declares a large answer and sends a
 * small burst now and then keeps a transfer alive above a per-interval
 * stall limit, and a member whose fetch has no overall deadline waits as
 * long as the peer likes, missing its window. Promise: every transfer ends
 * by the deadline its window gives (GD_ERR_TIMEOUT), and without one, once
 * its average rate over the whole transfer falls below the floor after the
 * grace; a peer that serves at a normal rate is unaffected. The dripping
 * peer is the loopback mock server (tests/mock_http.h); each case is
 * bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "plugin/peer_http.h"
#include "tests/mock_http.h"
#include "tests/testkit.h"

#define DECLARED (8u << 20) /* what the answer says it holds */
/* A burst of 96 KiB every 8 s: 12 KiB/s on average, below the 16 KiB/s
 * floor, while each burst lifts libcurl's per-interval speed over its
 * low-speed limit often enough that the limit alone never ends it. */
#define BURST (96u << 10)
#define DRIP_MS 8000

/* The dripping peer, or (ctx non-NULL) one that answers 64 KiB at once. */
static void peer(void *ctx, const gd_mock_request *req, gd_mock_response *resp) {
    (void)req;
    if (ctx != NULL) {
        resp->body = malloc(65537);
        CHECK(resp->body != NULL);
        if (resp->body != NULL) {
            memset(resp->body, 'x', 65536);
            resp->body[65536] = '\0';
        }
        return;
    }
    resp->drip_ms = DRIP_MS;
    resp->drip_bytes = BURST;
    resp->drip_total = DECLARED;
}

static int g_fast = 1;

/* One fetch of a payload from the dripper; its status and how long it took. */
static gd_status fetch(const gd_mock_server *m, int64_t deadline_ms, int64_t *took_ms) {
    gd_peer_http *p = NULL;
    CHECK_OK(gd_peer_http_open(&p));
    gd_peer_port port = gd_peer_http_port(p);
    const char *url = gd_mock_url(m);
    gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 3,
                           .deadline_ms = deadline_ms};
    gd_artifact_answer a;
    int64_t t0 = gd_clock_ms();
    gd_status s = port.iface->fetch(port.ctx, url, &req, (size_t)DECLARED, &a);
    *took_ms = gd_clock_ms() - t0;
    if (s == GD_OK)
        gd_artifact_answer_free(&a);
    gd_peer_http_close(p);
    return s;
}

/* The window's deadline ends the transfer: 1.5 s, not the peer's pace. */
static void test_deadline_ends_a_drip(void) {
    gd_mock_server *d = gd_mock_start(peer, NULL);
    CHECK(d != NULL);
    int64_t took = 0;
    gd_status s = fetch(d, gd_clock_ms() + 1500, &took);
    fprintf(stderr, "  deadline 1.5 s: status %d after %lld ms: %s\n", (int)s, (long long)took,
            gd_error_detail());
    CHECK(s == GD_ERR_TIMEOUT);
    CHECK(took >= 1400 && took < 4000);
    /* A deadline already past fails before connecting. */
    CHECK(fetch(d, gd_clock_ms() - 1, &took) == GD_ERR_TIMEOUT);
    CHECK(strstr(gd_error_detail(), "deadline has passed") != NULL);
    gd_mock_stop(d);
}

/* With no window deadline the average-rate floor ends it once the average
 * falls below 16 KiB/s after the 10 s grace (at about 12 s, two bursts in),
 * not the peer's 8 MiB at its pace (11 minutes). */
static void test_rate_floor_ends_a_drip(void) {
    gd_mock_server *d = gd_mock_start(peer, NULL);
    CHECK(d != NULL);
    int64_t took = 0;
    gd_status s = fetch(d, 0, &took);
    fprintf(stderr, "  no deadline: status %d after %lld ms: %s\n", (int)s, (long long)took,
            gd_error_detail());
    CHECK(s == GD_ERR_TIMEOUT);
    CHECK(strstr(gd_error_detail(), "on average") != NULL);
    CHECK(took >= 10000 && took < 20000);
    gd_mock_stop(d);
}

/* A peer that serves at once is fetched whole, deadline or not. */
static void test_normal_peer_unaffected(void) {
    gd_mock_server *d = gd_mock_start(peer, &g_fast);
    CHECK(d != NULL);
    int64_t took = 0;
    CHECK_OK(fetch(d, gd_clock_ms() + 5000, &took));
    CHECK_OK(fetch(d, 0, &took));
    gd_mock_stop(d);
}

int main(void) {
    RUN_TEST(test_deadline_ends_a_drip);
    RUN_TEST(test_rate_floor_ends_a_drip);
    RUN_TEST(test_normal_peer_unaffected);
    return gd_test_finish();
}
