/* The red-team review's fifth attack, the dripper, against the peer client
 * (plugin/peer_http.c): a peer that declares a large answer and sends a
 * small burst now and then keeps a transfer alive above a per-interval
 * stall limit, and a member whose fetch has no overall deadline waits as
 * long as the peer likes, missing its window. Promise: every transfer ends
 * by the deadline its window gives (GD_ERR_TIMEOUT), and without one, once
 * its average rate over the whole transfer falls below the floor after the
 * grace; a peer that serves at a normal rate is unaffected. The dripping
 * peer is a raw loopback server in a thread; each case is bounded. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "plugin/peer_http.h"
#include "tests/testkit.h"

#define DECLARED (8u << 20) /* what the answer says it holds */
/* A burst of 96 KiB every 8 s: 12 KiB/s on average, below the 16 KiB/s
 * floor, while each burst lifts libcurl's per-interval speed over its
 * low-speed limit often enough that the limit alone never ends it. */
#define BURST (96u << 10)
#define DRIP_MS 8000

typedef struct dripper {
    int listen_fd;
    int port;
    bool fast; /* serve the whole answer at once instead */
    atomic_int stop;
    pthread_t thread;
} dripper;

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits ms, or less once the test stops. */
static void wait_unless_stopped(dripper *d, int ms) {
    for (int t = 0; t < ms && !atomic_load(&d->stop); t += 100)
        sleep_ms(100);
}

static bool send_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static void serve(dripper *d, int fd) {
    char req[2048];
    (void)recv(fd, req, sizeof req, 0); /* the request line and headers; not read */
    size_t declared = d->fast ? 65536 : DECLARED;
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     declared);
    if (!send_all(fd, head, (size_t)n))
        return;
    static char bytes[BURST];
    if (d->fast) {
        send_all(fd, bytes, declared);
        return;
    }
    /* Drip until the client gives up (a send fails) or the test stops. */
    for (size_t sent = 0; sent < declared && !atomic_load(&d->stop); sent += BURST) {
        if (!send_all(fd, bytes, BURST))
            return;
        wait_unless_stopped(d, DRIP_MS);
    }
}

static void *drip_loop(void *arg) {
    dripper *d = arg;
    while (!atomic_load(&d->stop)) {
        struct pollfd p = {d->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(d->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        serve(d, fd);
        close(fd);
    }
    return NULL;
}

static void drip_start(dripper *d, bool fast) {
    memset(d, 0, sizeof *d);
    d->fast = fast;
    d->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(bind(d->listen_fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(d->listen_fd, 4) == 0);
    CHECK(getsockname(d->listen_fd, (struct sockaddr *)&a, &len) == 0);
    d->port = ntohs(a.sin_port);
    CHECK(pthread_create(&d->thread, NULL, drip_loop, d) == 0);
}

static void drip_stop(dripper *d) {
    atomic_store(&d->stop, 1);
    pthread_join(d->thread, NULL);
    close(d->listen_fd);
}

/* One fetch of a payload from the dripper; its status and how long it took. */
static gd_status fetch(const dripper *d, int64_t deadline_ms, int64_t *took_ms) {
    gd_peer_http *p = NULL;
    CHECK_OK(gd_peer_http_open(&p));
    gd_peer_port port = gd_peer_http_port(p);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", d->port);
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
    dripper d;
    drip_start(&d, false);
    int64_t took = 0;
    gd_status s = fetch(&d, gd_clock_ms() + 1500, &took);
    fprintf(stderr, "  deadline 1.5 s: status %d after %lld ms: %s\n", (int)s, (long long)took,
            gd_error_detail());
    CHECK(s == GD_ERR_TIMEOUT);
    CHECK(took >= 1400 && took < 4000);
    /* A deadline already past fails before connecting. */
    CHECK(fetch(&d, gd_clock_ms() - 1, &took) == GD_ERR_TIMEOUT);
    CHECK(strstr(gd_error_detail(), "deadline has passed") != NULL);
    drip_stop(&d);
}

/* With no window deadline the average-rate floor ends it once the average
 * falls below 16 KiB/s after the 10 s grace (at about 12 s, two bursts in),
 * not the peer's 8 MiB at its pace (11 minutes). */
static void test_rate_floor_ends_a_drip(void) {
    dripper d;
    drip_start(&d, false);
    int64_t took = 0;
    gd_status s = fetch(&d, 0, &took);
    fprintf(stderr, "  no deadline: status %d after %lld ms: %s\n", (int)s, (long long)took,
            gd_error_detail());
    CHECK(s == GD_ERR_TIMEOUT);
    CHECK(strstr(gd_error_detail(), "on average") != NULL);
    CHECK(took >= 10000 && took < 20000);
    drip_stop(&d);
}

/* A peer that serves at once is fetched whole, deadline or not. */
static void test_normal_peer_unaffected(void) {
    dripper d;
    drip_start(&d, true);
    int64_t took = 0;
    CHECK_OK(fetch(&d, gd_clock_ms() + 5000, &took));
    CHECK_OK(fetch(&d, 0, &took));
    drip_stop(&d);
}

int main(void) {
    RUN_TEST(test_deadline_ends_a_drip);
    RUN_TEST(test_rate_floor_ends_a_drip);
    RUN_TEST(test_normal_peer_unaffected);
    return gd_test_finish();
}
