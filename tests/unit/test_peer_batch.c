/* The peer client's batch (plugin/ports/peer_http.c fetch_all) against three of
 * the daemon's HTTP servers on loopback, as three peers. Their payload
 * handler answers only once all three peers hold a request at the same
 * time (else 503 after a bound), so the batch passes only if its transfers
 * run in parallel; in the same batch a payload not served yet, one over its
 * cap and a peer that refuses connections each get their own status and
 * detail, and the others are whole. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "plugin/http/http_server.h"
#include "plugin/ports/peer_http.h"
#include "tests/support/testkit.h"

#define PEERS 3
#define PAYLOAD_SIZE 5000
#define ROUND_TOGETHER 7 /* answered once every peer holds one */
#define ROUND_NOT_YET 8  /* 425 */

typedef struct peers {
    char payload[600];
    uint8_t bytes[PAYLOAD_SIZE];
    atomic_int waiting; /* ROUND_TOGETHER requests that have arrived */
} peers;

static peers g_peers;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gd_status peer_answer(void *ctx, const gd_artifact_req *req, gd_artifact_answer *out,
                             unsigned *http_status) {
    peers *p = ctx;
    if (req->kind != GD_REQ_PAYLOAD) {
        *http_status = 404;
        return gd_fail(GD_ERR_NOT_FOUND, "none");
    }
    if (req->round == ROUND_NOT_YET) {
        *http_status = 425;
        return gd_fail(GD_ERR_NOT_FOUND, "not yet");
    }
    if (req->round == ROUND_TOGETHER) {
        atomic_fetch_add(&p->waiting, 1);
        double deadline = now_s() + 5.0;
        while (atomic_load(&p->waiting) < PEERS && now_s() < deadline)
            usleep(2000);
        if (atomic_load(&p->waiting) < PEERS) {
            *http_status = 503;
            return gd_fail(GD_ERR_NETWORK, "the other peers were not asked at the same time");
        }
    }
    snprintf(out->path, sizeof out->path, "%s", p->payload);
    return GD_OK;
}

static void peer_count(void *ctx, uint64_t bytes_out) {
    (void)ctx;
    (void)bytes_out;
}

static const gd_http_handler g_handler = {.answer = peer_answer, .count = peer_count,
                                          .ctx = &g_peers};

/* A loopback URL on which nothing listens. */
static void refused_url(char *out, size_t cap) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd); /* bound, never listened on, closed: connections are refused */
    snprintf(out, cap, "http://127.0.0.1:%u/", (unsigned)ntohs(a.sin_port));
}

static void test_batch(void) {
    gd_http_server *srv[PEERS] = {NULL};
    char url[PEERS][80];
    for (int i = 0; i < PEERS; i++) {
        gd_http_limits l = gd_http_limits_default();
        char bound[64];
        CHECK_OK(gd_http_server_start(&srv[i], "127.0.0.1:0", &l, &g_handler, bound,
                                      sizeof bound));
        snprintf(url[i], sizeof url[i], "http://%s/", bound);
    }
    char refused[80];
    refused_url(refused, sizeof refused);
    gd_peer_http *http = NULL;
    CHECK_OK(gd_peer_http_open(&http));
    gd_peer_port port = gd_peer_http_port(http);
    CHECK(port.iface->fetch_all != NULL);
    gd_artifact_req together = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = ROUND_TOGETHER};
    gd_artifact_req plain = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 0};
    gd_artifact_req not_yet = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = ROUND_NOT_YET};
    gd_peer_fetch_item items[6] = {
        {.url = url[0], .req = together, .max_len = PAYLOAD_SIZE},
        {.url = url[1], .req = not_yet, .max_len = PAYLOAD_SIZE},
        {.url = url[1], .req = together, .max_len = PAYLOAD_SIZE},
        {.url = url[2], .req = plain, .max_len = PAYLOAD_SIZE - 1},
        {.url = refused, .req = plain, .max_len = PAYLOAD_SIZE},
        {.url = url[2], .req = together, .max_len = PAYLOAD_SIZE},
    };
    CHECK_OK(port.iface->fetch_all(port.ctx, items, 6));
    const gd_status want[6] = {GD_OK, GD_ERR_NOT_FOUND, GD_OK, GD_ERR_LIMIT, GD_ERR_NETWORK,
                               GD_OK};
    for (int i = 0; i < 6; i++) {
        CHECK(items[i].status == want[i]);
        if (items[i].status != want[i])
            fprintf(stderr, "item %d: %s\n", i, items[i].why);
        if (want[i] == GD_OK) {
            CHECK(items[i].answer.body.len == PAYLOAD_SIZE &&
                  memcmp(items[i].answer.body.data, g_peers.bytes, PAYLOAD_SIZE) == 0);
        } else {
            CHECK(items[i].answer.body.data == NULL);
            CHECK(strstr(items[i].why, items[i].url) != NULL); /* says which peer */
        }
        gd_artifact_answer_free(&items[i].answer);
    }
    CHECK(strstr(items[1].why, "425") != NULL);
    /* The same client fetches one at a time and in a second batch after it. */
    gd_artifact_answer a;
    CHECK_OK(port.iface->fetch(port.ctx, &a, url[0], &plain, PAYLOAD_SIZE));
    CHECK(a.body.len == PAYLOAD_SIZE);
    gd_artifact_answer_free(&a);
    gd_peer_fetch_item again[2] = {{.url = url[0], .req = plain, .max_len = PAYLOAD_SIZE},
                                   {.url = url[1], .req = plain, .max_len = PAYLOAD_SIZE}};
    CHECK_OK(port.iface->fetch_all(port.ctx, again, 2));
    CHECK(again[0].status == GD_OK && again[1].status == GD_OK);
    gd_artifact_answer_free(&again[0].answer);
    gd_artifact_answer_free(&again[1].answer);
    CHECK_OK(port.iface->fetch_all(port.ctx, again, 0)); /* an empty batch */
    gd_peer_http_close(http);
    for (int i = 0; i < PEERS; i++)
        gd_http_server_stop(srv[i]);
}

int main(void) {
    for (size_t i = 0; i < PAYLOAD_SIZE; i++)
        g_peers.bytes[i] = (uint8_t)(i * 13 + 1);
    snprintf(g_peers.payload, sizeof g_peers.payload, "%s",
             gd_test_write_file("payload.bin", g_peers.bytes, PAYLOAD_SIZE, 0600));
    RUN_TEST(test_batch);
    return gd_test_finish();
}
