/* The red-team review's fifth attack, the dripper, against the peer client
 * (plugin/ports/peer_http.c): a peer that declares a large answer and sends a
 * small burst now and then keeps a transfer alive above a per-interval
 * stall limit, and a member whose fetch has no overall deadline waits as
 * long as the peer likes, missing its window. Promise: every transfer ends
 * by the deadline its window gives (GD_ERR_TIMEOUT), and without one, once
 * its average rate over the whole transfer falls below the floor after the
 * grace; a peer that serves at a normal rate is unaffected. The dripping
 * peer is the loopback mock server (tests/support/mock_http.h); each case is
 * bounded. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "plugin/member/fetch_pool.h"
#include "plugin/ports/peer_http.h"
#include "tests/support/mock_http.h"
#include "tests/support/testkit.h"

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
    gd_status s = port.iface->fetch(port.ctx, &a, url, &req, (size_t)DECLARED);
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

/* The dripper and a normal peer, and a pool of 4 threads to fetch from
 * them (closed by the test; pool_bench_close stops the rest). */
typedef struct pool_bench {
    gd_mock_server *dripper, *fast;
    gd_peer_http *http;
    gd_fetch_pool *pool;
} pool_bench;

static void pool_bench_open(pool_bench *b) {
    b->dripper = gd_mock_start(peer, NULL);
    b->fast = gd_mock_start(peer, &g_fast);
    CHECK(b->dripper != NULL && b->fast != NULL);
    b->http = NULL;
    CHECK_OK(gd_peer_http_open(&b->http));
    b->pool = NULL;
    CHECK_OK(gd_fetch_pool_open(&b->pool, gd_peer_http_port(b->http), 4));
}

static void pool_bench_close(pool_bench *b) {
    gd_peer_http_close(b->http);
    gd_mock_stop(b->dripper);
    gd_mock_stop(b->fast);
}

/* Off the step: with the fetch pool (plugin/member/fetch_pool.h) a member asks
 * the dripper and a normal peer at once; the normal peer's answer is in
 * at once while the dripper's is still pending, so a duty that needs only
 * the normal peer goes out on time. Closing the pool cancels the drip
 * rather than waiting out its deadline. */
static void test_pool_keeps_the_step_free(void) {
    pool_bench b;
    pool_bench_open(&b);
    gd_mock_server *d = b.dripper, *f = b.fast;
    gd_fetch_pool *pool = b.pool;
    gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 3,
                           .deadline_ms = gd_clock_ms() + 60000};
    CHECK(gd_fetch_pool_ready(pool, "dripper", gd_mock_url(d), &req, DECLARED) ==
          GD_ERR_PENDING);
    gd_artifact_answer a;
    int64_t t0 = gd_clock_ms();
    gd_status s = GD_ERR_PENDING;
    while (s == GD_ERR_PENDING && gd_clock_ms() - t0 < 5000) {
        s = gd_fetch_pool_take(pool, &a, "fast", gd_mock_url(f), &req, DECLARED);
        if (s == GD_ERR_PENDING)
            usleep(5000);
    }
    int64_t took = gd_clock_ms() - t0;
    fprintf(stderr, "  the normal peer's answer after %lld ms, the dripper's pending\n",
            (long long)took);
    CHECK_OK(s);
    CHECK(a.body.len == 65536);
    gd_artifact_answer_free(&a);
    CHECK(took < 2000);
    CHECK(gd_fetch_pool_ready(pool, "dripper", gd_mock_url(d), &req, DECLARED) ==
          GD_ERR_PENDING);
    CHECK(gd_fetch_pool_pending(pool) == 1);
    /* Taken once: asking again fetches again. */
    CHECK(gd_fetch_pool_take(pool, &a, "fast", gd_mock_url(f), &req, DECLARED) ==
          GD_ERR_PENDING);
    t0 = gd_clock_ms();
    gd_fetch_pool_close(pool);
    took = gd_clock_ms() - t0;
    fprintf(stderr, "  closed in %lld ms with the drip in flight\n", (long long)took);
    CHECK(took < 3000);
    pool_bench_close(&b);
}

/* A failed answer is handed over once, with its reason, like a fetch on
 * the step; a port that cannot open another has no pool. */
static void test_pool_failure_and_refusal(void) {
    gd_mock_server *d = gd_mock_start(peer, NULL);
    CHECK(d != NULL);
    gd_peer_http *p = NULL;
    CHECK_OK(gd_peer_http_open(&p));
    gd_fetch_pool *pool = NULL;
    CHECK_OK(gd_fetch_pool_open(&pool, gd_peer_http_port(p), 1));
    gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 3,
                           .deadline_ms = gd_clock_ms() + 1000};
    gd_artifact_answer a;
    gd_status s = GD_ERR_PENDING;
    int64_t t0 = gd_clock_ms();
    while (s == GD_ERR_PENDING && gd_clock_ms() - t0 < 5000) {
        s = gd_fetch_pool_take(pool, &a, "dripper", gd_mock_url(d), &req, DECLARED);
        if (s == GD_ERR_PENDING)
            usleep(20000);
    }
    CHECK(s == GD_ERR_TIMEOUT);
    CHECK(strstr(gd_error_detail(), "timed out") != NULL);
    /* Rounds before the one before the current are forgotten. */
    req.round = 1;
    CHECK(gd_fetch_pool_ready(pool, "dripper", gd_mock_url(d), &req, DECLARED) ==
          GD_ERR_PENDING);
    gd_fetch_pool_forget_before(pool, 3);
    CHECK(gd_fetch_pool_pending(pool) == 0);
    gd_fetch_pool_close(pool);
    static const gd_peer_port_iface one_thread = {NULL};
    CHECK(gd_fetch_pool_open(&pool, (gd_peer_port){&one_thread, NULL}, 1) == GD_ERR_INVALID);
    gd_peer_http_close(p);
    gd_mock_stop(d);
}

/* Files in dir (entries but . and ..). */
static size_t files_in(const char *dir) {
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

/* Answers fetched into files through the pool: the pool keeps its own
 * copy of the path (the asker's buffer may change at once), two paths are
 * two fetches, and a transfer dropped in flight leaves nothing behind, not
 * even a temporary file, once the pool is closed. */
static void test_pool_fetches_into_files(void) {
    pool_bench b;
    pool_bench_open(&b);
    gd_mock_server *d = b.dripper, *f = b.fast;
    gd_fetch_pool *pool = b.pool;
    char dir[512], a_path[600], b_path[600], ask[600];
    snprintf(dir, sizeof dir, "%s/pool-into", gd_test_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(a_path, sizeof a_path, "%s/a.bin", dir);
    snprintf(b_path, sizeof b_path, "%s/b.bin", dir);
    gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 3,
                           .deadline_ms = gd_clock_ms() + 60000, .into = ask};
    snprintf(ask, sizeof ask, "%s", a_path);
    CHECK(gd_fetch_pool_ready(pool, "fast", gd_mock_url(f), &req, DECLARED) == GD_ERR_PENDING);
    snprintf(ask, sizeof ask, "%s", b_path); /* another path: another fetch */
    CHECK(gd_fetch_pool_ready(pool, "fast", gd_mock_url(f), &req, DECLARED) == GD_ERR_PENDING);
    snprintf(ask, sizeof ask, "%s", a_path);
    gd_artifact_answer a;
    gd_status s = GD_ERR_PENDING;
    for (int64_t t0 = gd_clock_ms(); s == GD_ERR_PENDING && gd_clock_ms() - t0 < 5000;) {
        s = gd_fetch_pool_take(pool, &a, "fast", gd_mock_url(f), &req, DECLARED);
        if (s == GD_ERR_PENDING)
            usleep(5000);
    }
    CHECK_OK(s);
    CHECK(a.body.len == 0 && strcmp(a.path, a_path) == 0);
    struct stat st;
    CHECK(stat(a_path, &st) == 0 && st.st_size == 65536);
    gd_artifact_answer_free(&a);
    /* The dripper's answer is dropped in flight, then the pool closed. */
    char drip_path[600];
    snprintf(drip_path, sizeof drip_path, "%s/drip.bin", dir);
    req.into = drip_path;
    CHECK(gd_fetch_pool_ready(pool, "dripper", gd_mock_url(d), &req, DECLARED) ==
          GD_ERR_PENDING);
    usleep(300 * 1000); /* its first burst is in the temporary file */
    gd_fetch_pool_drop(pool, "dripper", &req, DECLARED);
    gd_fetch_pool_close(pool);
    CHECK(access(drip_path, F_OK) != 0);
    CHECK(files_in(dir) == 2); /* a.bin and b.bin (once its fetch ended) */
    pool_bench_close(&b);
}

int main(void) {
    RUN_TEST(test_deadline_ends_a_drip);
    RUN_TEST(test_rate_floor_ends_a_drip);
    RUN_TEST(test_normal_peer_unaffected);
    RUN_TEST(test_pool_keeps_the_step_free);
    RUN_TEST(test_pool_failure_and_refusal);
    RUN_TEST(test_pool_fetches_into_files);
    return gd_test_finish();
}
