/* The daemon's HTTP server (plugin/http/http_server.c) on loopback, talked to
 * with raw sockets so nothing is normalised on the way: every path kind
 * reaches the handler, traversal spellings never do, ranges answer 206,
 * 416 or 200 as RFC 9110 says, proofs come back as exact hex, bodies and
 * other methods are refused, and the limits hold (huge headers, a slow
 * client, per-address connections and request rate) while other clients
 * are served. Every socket read is bounded by SO_RCVTIMEO. The peer
 * client (plugin/ports/peer_http.c) is checked against it too. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/file.h"
#include "plugin/http/http_server.h"
#include "plugin/ports/peer_http.h"
#include "tests/support/testkit.h"

#define PAYLOAD_SIZE 1000
#define REPLY_CAP (256 * 1024)
#define BIG_PROOF 8192 /* the most the default 32 KiB per connection sends */

/* The fake node: what it serves, and what it was asked and counted. */
typedef struct fake {
    char payload[600], link[600], fifo[600], dir[600], missing[600];
    uint8_t bytes[PAYLOAD_SIZE];
    atomic_uint answers;
    atomic_ullong bytes_out;
    atomic_uint counted;
    atomic_uint refused_rate, refused_connections;
} fake;

static fake g_fake;
static uint16_t g_port; /* the main server */

static const uint8_t g_proof[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};

static gd_status fake_chunk(const gd_artifact_req *req, gd_artifact_answer *out) {
    /* chunk 0 and 3: the small proof; 1: the most that fits; 2: one byte
     * more; others: none. */
    bool small = req->chunk == 0 || req->chunk == 3;
    size_t proof_len = small ? sizeof g_proof : req->chunk == 1 ? BIG_PROOF : BIG_PROOF + 1;
    if (req->chunk > 3)
        proof_len = 0;
    for (size_t i = 0; i < proof_len; i++) {
        uint8_t b = small ? g_proof[i] : (uint8_t)(i * 31 + 7);
        GD_TRY(gd_buf_append(&out->proof, &b, 1));
    }
    out->content_type = "application/x-gd-chunk";
    if (req->chunk == 3)
        return GD_OK; /* an empty body with its proof */
    char text[32];
    snprintf(text, sizeof text, "chunk %u", (unsigned)req->chunk);
    return gd_buf_append_str(&out->body, text);
}

/* CHECKPOINT answers by run: what a handler must never get served. */
static gd_status fake_checkpoint(fake *f, const gd_artifact_req *req, gd_artifact_answer *out) {
    const char *paths[] = {f->payload, f->link, f->fifo, f->dir, f->missing};
    const char *path = req->run < 5 ? paths[req->run] : "";
    snprintf(out->path, sizeof out->path, "%s", path);
    return GD_OK;
}

static gd_status fake_answer(void *ctx, const gd_artifact_req *req, gd_artifact_answer *out,
                             unsigned *http_status) {
    fake *f = ctx;
    atomic_fetch_add(&f->answers, 1);
    switch (req->kind) {
    case GD_REQ_STATUS:
        out->content_type = "application/json";
        return gd_buf_append_str(&out->body, "{\"ok\":true}");
    case GD_REQ_PAYLOAD:
        snprintf(out->path, sizeof out->path, "%s", f->payload);
        return GD_OK;
    case GD_REQ_PAYLOAD_CHUNK:
        return fake_chunk(req, out);
    case GD_REQ_STATE_CHUNK:
        *http_status = 425;
        return gd_fail(GD_ERR_NOT_FOUND, "not yet");
    case GD_REQ_CHECKPOINT:
        return fake_checkpoint(f, req, out);
    default:
        /* Echoes the parsed request, so the test sees what reached here. */
        *http_status = 404;
        return gd_fail(GD_ERR_NOT_FOUND, "none of kind=%d run=%llu round=%llu leaf=%u chunk=%u",
                       (int)req->kind, (unsigned long long)req->run,
                       (unsigned long long)req->round, (unsigned)req->leaf,
                       (unsigned)req->chunk);
    }
}

static void fake_count(void *ctx, uint64_t bytes_out) {
    fake *f = ctx;
    atomic_fetch_add(&f->bytes_out, bytes_out);
    atomic_fetch_add(&f->counted, 1);
}

static void fake_refused(void *ctx, const char *reason) {
    fake *f = ctx;
    atomic_fetch_add(strcmp(reason, "rate") == 0 ? &f->refused_rate : &f->refused_connections, 1);
}

static const gd_http_handler g_handler = {.answer = fake_answer, .count = fake_count,
                                          .refused = fake_refused, .ctx = &g_fake};

static void fake_setup(fake *f) {
    for (size_t i = 0; i < PAYLOAD_SIZE; i++)
        f->bytes[i] = (uint8_t)(i * 7 + 3);
    snprintf(f->payload, sizeof f->payload, "%s",
             gd_test_write_file("payload.bin", f->bytes, PAYLOAD_SIZE, 0600));
    const char *dir = gd_test_tmpdir();
    snprintf(f->link, sizeof f->link, "%s/link.bin", dir);
    snprintf(f->fifo, sizeof f->fifo, "%s/fifo", dir);
    snprintf(f->dir, sizeof f->dir, "%s/subdir", dir);
    snprintf(f->missing, sizeof f->missing, "%s/missing.bin", dir);
    CHECK(symlink(f->payload, f->link) == 0);
    CHECK(mkfifo(f->fifo, 0600) == 0);
    CHECK(mkdir(f->dir, 0700) == 0);
}

/* ---- a raw HTTP client ---- */

typedef struct reply {
    unsigned status; /* 0: closed or reset without a status line */
    bool timed_out;  /* the server kept the connection open and silent */
    char *raw;
    size_t len;
    const char *body;
    size_t body_len;
} reply;

static int dial_addr(const struct sockaddr *addr, socklen_t len) {
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, addr, len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int dial(uint16_t port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return dial_addr((const struct sockaddr *)&a, sizeof a);
}

/* Sends what the server takes; a server closing early is not an error here. */
static void send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static reply read_reply(int fd) {
    reply r = {0};
    r.raw = calloc(1, REPLY_CAP + 1);
    if (r.raw == NULL)
        abort();
    for (;;) {
        if (r.len == REPLY_CAP)
            break;
        ssize_t n = recv(fd, r.raw + r.len, REPLY_CAP - r.len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            r.timed_out = true;
        if (n <= 0)
            break;
        r.len += (size_t)n;
    }
    unsigned code = 0;
    if (sscanf(r.raw, "HTTP/1.%*c %3u", &code) == 1)
        r.status = code;
    char *end = strstr(r.raw, "\r\n\r\n");
    r.body = end ? end + 4 : r.raw + r.len;
    r.body_len = (size_t)(r.raw + r.len - r.body);
    return r;
}

static reply ask_raw_port(uint16_t port, const char *request, size_t len) {
    int fd = dial(port);
    if (fd < 0) {
        fprintf(stderr, "  cannot connect to port %u: %s\n", (unsigned)port, strerror(errno));
        gd_test_failures++;
        return (reply){.raw = calloc(1, 1)};
    }
    send_all(fd, request, len);
    reply r = read_reply(fd);
    close(fd);
    return r;
}

static reply ask_port(uint16_t port, const char *method, const char *path, const char *headers) {
    static const char fmt[] = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n";
    headers = headers ? headers : "";
    size_t cap = sizeof fmt + strlen(method) + strlen(path) + strlen(headers);
    char *req = malloc(cap);
    if (req == NULL)
        abort();
    int n = snprintf(req, cap, fmt, method, path, headers);
    reply r = ask_raw_port(port, req, n < 0 ? 0 : (size_t)n);
    free(req);
    return r;
}

static reply ask(const char *method, const char *path, const char *headers) {
    return ask_port(g_port, method, path, headers);
}

static void reply_free(reply *r) {
    free(r->raw);
    r->raw = NULL;
}

/* The value of header name in r ("" if absent), into a static buffer. */
static const char *header(const reply *r, const char *name) {
    static char value[32768];
    value[0] = '\0';
    size_t name_len = strlen(name);
    for (const char *line = strstr(r->raw, "\r\n"); line && line + 2 < r->body; ) {
        line += 2;
        if (strncasecmp(line, name, name_len) == 0 && line[name_len] == ':') {
            const char *v = line + name_len + 1;
            v += strspn(v, " \t");
            size_t len = strcspn(v, "\r\n");
            if (len >= sizeof value)
                len = sizeof value - 1;
            memcpy(value, v, len);
            value[len] = '\0';
            return value;
        }
        line = strstr(line, "\r\n");
    }
    return value;
}

static bool body_is(const reply *r, const void *data, size_t len) {
    return r->body_len == len && memcmp(r->body, data, len) == 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- tests on the main server ---- */

static void expect_404_echo(const char *path, const char *echo) {
    reply r = ask("GET", path, NULL);
    CHECK(r.status == 404);
    CHECK(strstr(r.body, echo) != NULL);
    CHECK_STR_EQ(header(&r, "Content-Type"), "text/plain; charset=utf-8");
    reply_free(&r);
}

static void test_every_path_kind(void) {
    reply r = ask("GET", "/v1/status", NULL);
    CHECK(r.status == 200);
    CHECK(body_is(&r, "{\"ok\":true}", 11));
    CHECK_STR_EQ(header(&r, "Content-Type"), "application/json");
    reply_free(&r);
    expect_404_echo("/metrics", "kind=2 run=0 round=0 leaf=0 chunk=0");
    r = ask("GET", "/v1/runs/7/rounds/3/payload", NULL);
    CHECK(r.status == 200);
    CHECK(body_is(&r, g_fake.bytes, PAYLOAD_SIZE));
    CHECK_STR_EQ(header(&r, "Content-Type"), "application/octet-stream");
    CHECK_STR_EQ(header(&r, "Accept-Ranges"), "bytes");
    reply_free(&r);
    r = ask("GET", "/v1/runs/7/rounds/3/payload/chunks/0", NULL);
    CHECK(r.status == 200);
    CHECK(body_is(&r, "chunk 0", 7));
    reply_free(&r);
    expect_404_echo("/v1/runs/18446744073709551615/rounds/9/transcript",
                    "kind=5 run=18446744073709551615 round=9 leaf=0 chunk=0");
    expect_404_echo("/v1/runs/1/rounds/2/states/4294967295", "kind=6 run=1 round=2 leaf=4294967295");
    r = ask("GET", "/v1/runs/1/rounds/2/states/3/chunks/4", NULL);
    CHECK(r.status == 425);
    CHECK(body_is(&r, "not yet\n", 8));
    reply_free(&r);
    expect_404_echo("/v1/runs/5/global/6/chunks/7", "kind=8 run=5 round=6 leaf=0 chunk=7");
    r = ask("GET", "/v1/runs/0/checkpoint.safetensors", NULL);
    CHECK(r.status == 200);
    CHECK(body_is(&r, g_fake.bytes, PAYLOAD_SIZE));
    reply_free(&r);
    r = ask("GET", "/v1/status?", NULL);
    CHECK(r.status == 200);
    reply_free(&r);
}

static void test_traversal(void) {
    static const char *paths[] = {
        "/v1/runs/1/rounds/0/../../../etc/passwd",
        "/v1/runs/1/rounds/0/%2e%2e/%2e%2e/payload",
        "/v1/runs/1/rounds/0/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/v1/runs/1/rounds/%30/payload",
        "//v1/runs/1/rounds/0/payload",
        "/v1/runs/1/rounds/0//payload",
        "/v1/runs/1/rounds/0/payload/",
        "/v1/runs/1/rounds/0/payload?x=1",
        "/v1/runs/1/rounds/0/payload/..",
        "/v1/runs/01/rounds/0/payload",
        "/v1/runs/1/rounds/0/./payload",
        "/v1/runs/1/rounds/0/payload%00",
        "http://127.0.0.1/v1/runs/1/rounds/0/payload",
    };
    unsigned before = atomic_load(&g_fake.answers);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        reply r = ask("GET", paths[i], NULL);
        if (r.status < 400 || r.status > 499)
            fprintf(stderr, "  %s: %u\n", paths[i], r.status);
        CHECK(r.status >= 400 && r.status <= 499);
        CHECK(r.body_len < 200);
        CHECK(memmem(r.raw, r.len, g_fake.bytes, 16) == NULL);
        reply_free(&r);
    }
    CHECK(atomic_load(&g_fake.answers) == before); /* never reached the handler */
}

/* A request line with a NUL: libmicrohttpd 0.9.75 reads the target as a C
 * string, so the target ends there. What comes back is a refusal or the
 * answer to exactly the visible part, never anything the rest could name. */
static void test_nul_in_target(void) {
    static const char chunk[] = "GET /v1/runs/1/rounds/0/payload/chunks/0\0/../../../etc/passwd "
                                "HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    reply r = ask_raw_port(g_port, chunk, sizeof chunk - 1);
    CHECK((r.status >= 400 && r.status <= 499) || (r.status == 200 && body_is(&r, "chunk 0", 7)));
    reply_free(&r);
    static const char dots[] = "GET /v1/runs/1/rounds/0/..\0/payload HTTP/1.1\r\nHost: a\r\n"
                               "Connection: close\r\n\r\n";
    r = ask_raw_port(g_port, dots, sizeof dots - 1);
    CHECK(r.status == 400);
    CHECK(memmem(r.raw, r.len, g_fake.bytes, 16) == NULL);
    reply_free(&r);
}

static void expect_range(const char *range, unsigned status, uint64_t first, uint64_t last,
                         const char *content_range) {
    char headers[256];
    snprintf(headers, sizeof headers, "Range: %s\r\n", range);
    reply r = ask("GET", "/v1/runs/1/rounds/0/payload", headers);
    if (r.status != status)
        fprintf(stderr, "  Range %s: %u, expected %u\n", range, r.status, status);
    CHECK(r.status == status);
    if (status == 206 || status == 200)
        CHECK(body_is(&r, g_fake.bytes + first, (size_t)(last - first + 1)));
    if (status == 416)
        CHECK(memmem(r.raw, r.len, g_fake.bytes, 16) == NULL);
    CHECK_STR_EQ(header(&r, "Content-Range"), content_range);
    reply_free(&r);
}

static void test_ranges(void) {
    expect_range("bytes=10-19", 206, 10, 19, "bytes 10-19/1000");
    expect_range("bytes=990-", 206, 990, 999, "bytes 990-999/1000");
    expect_range("bytes=-5", 206, 995, 999, "bytes 995-999/1000");
    expect_range("bytes=0-0", 206, 0, 0, "bytes 0-0/1000");
    expect_range("bytes=999-5000", 206, 999, 999, "bytes 999-999/1000");
    expect_range("bytes=-5000", 206, 0, 999, "bytes 0-999/1000");
    expect_range("bytes=5-2", 200, 0, 999, "");          /* invalid: ignored */
    expect_range("bytes=0-1,3-4", 200, 0, 999, "");      /* several: whole */
    expect_range("bytes=junk", 200, 0, 999, "");
    expect_range("items=0-1", 200, 0, 999, "");
    expect_range("bytes=999999-", 416, 0, 0, "bytes */1000");
    expect_range("bytes=1000-", 416, 0, 0, "bytes */1000");
    expect_range("bytes=-0", 416, 0, 0, "bytes */1000");
    expect_range("bytes=99999999999999999999999-", 416, 0, 0, "bytes */1000");
    /* A Range sent twice is a list of two: answered whole. */
    reply r = ask("GET", "/v1/runs/1/rounds/0/payload", "Range: bytes=0-1\r\nRange: bytes=2-3\r\n");
    CHECK(r.status == 200 && r.body_len == PAYLOAD_SIZE);
    reply_free(&r);
    /* Range on a body answer is ignored. */
    r = ask("GET", "/v1/status", "Range: bytes=0-1\r\n");
    CHECK(r.status == 200 && r.body_len == 11);
    reply_free(&r);
}

static void test_head(void) {
    reply r = ask("HEAD", "/v1/runs/1/rounds/0/payload", "Range: bytes=0-1\r\n");
    CHECK(r.status == 200); /* Range is defined for GET only */
    CHECK_STR_EQ(header(&r, "Content-Length"), "1000");
    CHECK(r.body_len == 0);
    reply_free(&r);
    r = ask("HEAD", "/v1/runs/1/rounds/0/payload/chunks/0", NULL);
    CHECK(r.status == 200);
    CHECK_STR_EQ(header(&r, "X-Gd-Proof"), "00017f80abff");
    CHECK_STR_EQ(header(&r, "Content-Length"), "7");
    CHECK(r.body_len == 0);
    reply_free(&r);
}

static void test_proof(void) {
    reply r = ask("GET", "/v1/runs/1/rounds/0/payload/chunks/0", NULL);
    CHECK(r.status == 200);
    CHECK_STR_EQ(header(&r, "X-Gd-Proof"), "00017f80abff");
    CHECK_STR_EQ(header(&r, "Content-Type"), "application/x-gd-chunk");
    reply_free(&r);
    uint8_t big[BIG_PROOF];
    char hex[2 * BIG_PROOF + 1];
    for (size_t i = 0; i < BIG_PROOF; i++)
        big[i] = (uint8_t)(i * 31 + 7);
    gd_hex_encode(hex, big, BIG_PROOF, false);
    r = ask("GET", "/v1/runs/1/rounds/0/payload/chunks/1", NULL);
    CHECK(r.status == 200);
    CHECK_STR_EQ(header(&r, "X-Gd-Proof"), hex);
    CHECK(body_is(&r, "chunk 1", 7));
    reply_free(&r);
    /* With request headers eating the connection's memory, the big proof
     * may not fit: the answer is then refused or cut off, never garbled. */
    char *fat = malloc(13000);
    if (fat == NULL)
        abort();
    memcpy(fat, "X-Fat: ", 7);
    memset(fat + 7, 'f', 12000);
    memcpy(fat + 12007, "\r\n", 3);
    r = ask("GET", "/v1/runs/1/rounds/0/payload/chunks/1", fat);
    CHECK(r.status == 0 || r.status >= 400 ||
          (r.status == 200 && strcmp(header(&r, "X-Gd-Proof"), hex) == 0));
    reply_free(&r);
    free(fat);
    r = ask("GET", "/v1/runs/1/rounds/0/payload/chunks/2", NULL); /* over the budget */
    CHECK(r.status == 500);
    CHECK_STR_EQ(header(&r, "X-Gd-Proof"), "");
    reply_free(&r);
    r = ask("GET", "/v1/runs/1/rounds/0/payload/chunks/3", NULL); /* empty body, proof */
    CHECK(r.status == 200);
    CHECK_STR_EQ(header(&r, "X-Gd-Proof"), "00017f80abff");
    CHECK_STR_EQ(header(&r, "Content-Length"), "0");
    reply_free(&r);
    r = ask("GET", "/v1/runs/1/rounds/0/payload/chunks/4", NULL); /* no proof, no header */
    CHECK(r.status == 200);
    CHECK(strcasestr(r.raw, "X-Gd-Proof") == NULL);
    reply_free(&r);
}

/* The peer client against this server: a whole file, a file's first bytes
 * (Range, answered 206), a chunk's proof decoded from its hex, and an
 * answer over the client's cap refused. */
static void test_peer_client(void) {
    gd_peer_http *http = NULL;
    CHECK_OK(gd_peer_http_open(&http));
    if (http == NULL)
        return;
    gd_peer_port port = gd_peer_http_port(http);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", (unsigned)g_port);
    gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 0};
    gd_artifact_answer a;
    CHECK_OK(port.iface->fetch(port.ctx, &a, url, &req, PAYLOAD_SIZE));
    CHECK(a.body.len == PAYLOAD_SIZE && memcmp(a.body.data, g_fake.bytes, PAYLOAD_SIZE) == 0);
    gd_artifact_answer_free(&a);

    req.first_bytes = 312;
    CHECK_OK(port.iface->fetch(port.ctx, &a, url, &req, 312));
    CHECK(a.body.len == 312 && memcmp(a.body.data, g_fake.bytes, 312) == 0);
    gd_artifact_answer_free(&a);

    req.first_bytes = 0; /* the whole file is over a cap of 999 */
    CHECK(port.iface->fetch(port.ctx, &a, url, &req, PAYLOAD_SIZE - 1) == GD_ERR_LIMIT);
    CHECK(a.body.data == NULL);

    req = (gd_artifact_req){.kind = GD_REQ_PAYLOAD_CHUNK, .run = 1, .round = 0, .chunk = 0};
    CHECK_OK(port.iface->fetch(port.ctx, &a, url, &req, 64));
    CHECK(a.body.len == 7 && memcmp(a.body.data, "chunk 0", 7) == 0);
    CHECK(a.proof.len == sizeof g_proof && memcmp(a.proof.data, g_proof, sizeof g_proof) == 0);
    gd_artifact_answer_free(&a);

    req.kind = GD_REQ_STATE_CHUNK; /* 425: not yet */
    CHECK(port.iface->fetch(port.ctx, &a, url, &req, 64) == GD_ERR_NOT_FOUND);
    gd_peer_http_close(http);
}

/* Entries of dir whose name starts with prefix. */
static size_t entries_starting(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d != NULL)
        closedir(d);
    return n;
}

/* A body fetched into a file (req.into): it lands there whole, memory
 * holds none of it, a Range prefix works as in memory; an answer over the
 * cap leaves neither the file nor a temporary one, and a file that cannot
 * be written is the client's own failure (GD_ERR_IO), not the peer's. */
static void test_peer_client_into_file(void) {
    gd_peer_http *http = NULL;
    CHECK_OK(gd_peer_http_open(&http));
    if (http == NULL)
        return;
    gd_peer_port port = gd_peer_http_port(http);
    char url[64], dir[512], into[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", (unsigned)g_port);
    snprintf(dir, sizeof dir, "%s/into", gd_test_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(into, sizeof into, "%s/fetched.bin", dir);
    gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 0, .into = into};
    gd_artifact_answer a;
    CHECK_OK(port.iface->fetch(port.ctx, &a, url, &req, PAYLOAD_SIZE));
    CHECK(a.body.len == 0 && strcmp(a.path, into) == 0);
    gd_buf got = {0};
    CHECK_OK(gd_file_read(&got, into, PAYLOAD_SIZE));
    CHECK(got.len == PAYLOAD_SIZE && memcmp(got.data, g_fake.bytes, PAYLOAD_SIZE) == 0);
    gd_artifact_answer_free(&a);

    req.first_bytes = 312; /* replaces the file */
    CHECK_OK(port.iface->fetch(port.ctx, &a, url, &req, 312));
    CHECK_OK(gd_file_read(&got, into, PAYLOAD_SIZE));
    CHECK(got.len == 312 && memcmp(got.data, g_fake.bytes, 312) == 0);
    gd_artifact_answer_free(&a);
    CHECK(unlink(into) == 0);

    req.first_bytes = 0;
    CHECK(port.iface->fetch(port.ctx, &a, url, &req, PAYLOAD_SIZE - 1) == GD_ERR_LIMIT);
    CHECK(a.path[0] == '\0' && access(into, F_OK) != 0);
    CHECK(entries_starting(dir, "fetched") == 0);

    gd_peer_fetch_item item = {.url = url, .req = req, .max_len = PAYLOAD_SIZE};
    CHECK_OK(port.iface->fetch_all(port.ctx, &item, 1));
    CHECK(item.status == GD_OK && strcmp(item.answer.path, into) == 0);
    CHECK_OK(gd_file_read(&got, into, PAYLOAD_SIZE));
    CHECK(got.len == PAYLOAD_SIZE);
    gd_artifact_answer_free(&item.answer);

    char missing[700];
    snprintf(missing, sizeof missing, "%s/no-such-dir/fetched.bin", dir);
    req.into = missing;
    CHECK(port.iface->fetch(port.ctx, &a, url, &req, PAYLOAD_SIZE) == GD_ERR_IO);
    gd_buf_free(&got);
    gd_peer_http_close(http);
}

static void test_file_kinds(void) {
    static const unsigned expected[] = {200, 500, 500, 500, 404};
    for (unsigned run = 1; run < 5; run++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/runs/%u/checkpoint.safetensors", run);
        double t0 = now_s();
        reply r = ask("GET", path, NULL);
        CHECK(r.status == expected[run]);
        CHECK(now_s() - t0 < 2.0); /* a FIFO must not block the server */
        CHECK(memmem(r.raw, r.len, g_fake.bytes, 16) == NULL);
        CHECK(strstr(r.raw, gd_test_tmpdir()) == NULL); /* no local path leaks out */
        reply_free(&r);
    }
}

static void test_methods_and_bodies(void) {
    reply r = ask("POST", "/v1/status", "Content-Length: 0\r\n");
    CHECK(r.status == 405);
    CHECK_STR_EQ(header(&r, "Allow"), "GET, HEAD");
    reply_free(&r);
    r = ask("DELETE", "/v1/runs/1/rounds/0/payload", NULL);
    CHECK(r.status == 405);
    reply_free(&r);
    unsigned before = atomic_load(&g_fake.answers);
    static const char with_body[] = "GET /v1/status HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
                                    "Content-Length: 5\r\n\r\nhello";
    r = ask_raw_port(g_port, with_body, sizeof with_body - 1);
    CHECK(r.status == 413);
    reply_free(&r);
    static const char chunked[] = "GET /v1/status HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    r = ask_raw_port(g_port, chunked, sizeof chunked - 1);
    CHECK(r.status == 413 || r.status == 400);
    reply_free(&r);
    CHECK(atomic_load(&g_fake.answers) == before);
    r = ask("GET", "/v1/status", "Content-Length: 0\r\n");
    CHECK(r.status == 200);
    reply_free(&r);
}

static void test_huge_headers(void) {
    size_t big = 100 * 1024;
    char *req = malloc(big + 256);
    if (req == NULL)
        abort();
    int n = snprintf(req, 256, "GET /v1/status HTTP/1.1\r\nHost: a\r\nConnection: close\r\nX-Big: ");
    memset(req + n, 'a', big);
    memcpy(req + n + big, "\r\n\r\n", 4);
    reply r = ask_raw_port(g_port, req, (size_t)n + big + 4);
    CHECK(r.status == 0 || (r.status >= 400 && r.status <= 499));
    CHECK(!r.timed_out);
    reply_free(&r);
    /* Many small headers, the same. */
    size_t off = (size_t)snprintf(req, 256, "GET /v1/status HTTP/1.1\r\nHost: a\r\n");
    while (off + 16 < big)
        off += (size_t)snprintf(req + off, 16, "X-%05zu: v\r\n", off % 100000);
    memcpy(req + off, "\r\n", 2);
    r = ask_raw_port(g_port, req, off + 2);
    CHECK(r.status == 0 || (r.status >= 400 && r.status <= 499));
    reply_free(&r);
    free(req);
    r = ask("GET", "/v1/status", NULL); /* the server is still there */
    CHECK(r.status == 200);
    reply_free(&r);
}

/* The main server's idle timeout is 1 s. */
static void test_slow_client(void) {
    int slow = dial(g_port);
    CHECK(slow >= 0);
    if (slow < 0)
        return;
    send_all(slow, "GET /v1/sta", 11);
    double t0 = now_s();
    reply r = ask("GET", "/v1/status", NULL); /* served meanwhile */
    CHECK(r.status == 200);
    reply_free(&r);
    char c;
    ssize_t got = recv(slow, &c, 1, 0); /* blocks until the server drops it */
    int err = errno;
    double waited = now_s() - t0;
    CHECK(got == 0 || (got < 0 && err == ECONNRESET));
    CHECK(waited > 0.5 && waited < 4.0);
    close(slow);
}

/* A client that trickles its request a byte at a time, never silent for
 * the idle timeout, is dropped once the request has not arrived whole
 * within it (1 s here). */
static void test_trickling_client(void) {
    int slow = dial(g_port);
    CHECK(slow >= 0);
    if (slow < 0)
        return;
    static const char request[] = "GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    double t0 = now_s();
    bool dropped = false;
    for (size_t i = 0; !dropped && now_s() - t0 < 6.0; i++) {
        char c = i < sizeof request - 1 ? request[i] : 'a';
        if (send(slow, &c, 1, MSG_NOSIGNAL) != 1)
            break; /* the server has closed it */
        struct pollfd p = {.fd = slow, .events = POLLIN};
        if (poll(&p, 1, 300) > 0) { /* a byte every 300 ms: never idle for 1 s */
            char got;
            ssize_t n = recv(slow, &got, 1, 0);
            dropped = n == 0 || (n < 0 && errno == ECONNRESET);
        }
    }
    double waited = now_s() - t0;
    CHECK(waited > 0.8 && waited < 2.5);
    close(slow);
}

static void test_count(void) {
    /* Every earlier request completed before its connection closed. */
    unsigned long long before = atomic_load(&g_fake.bytes_out);
    unsigned counted = atomic_load(&g_fake.counted);
    reply r = ask("GET", "/v1/runs/1/rounds/0/payload", "Range: bytes=100-199\r\n");
    CHECK(r.status == 206);
    reply_free(&r);
    r = ask("HEAD", "/v1/runs/1/rounds/0/payload", NULL);
    reply_free(&r);
    r = ask("GET", "/v1/runs/1/rounds/0/payload", NULL);
    reply_free(&r);
    for (int i = 0; i < 100 && atomic_load(&g_fake.counted) < counted + 3; i++)
        usleep(10000);
    CHECK(atomic_load(&g_fake.counted) == counted + 3);
    CHECK(atomic_load(&g_fake.bytes_out) == before + 100 + 0 + PAYLOAD_SIZE);
}

/* ---- servers with other limits ---- */

static gd_http_limits test_limits(void) {
    gd_http_limits l = gd_http_limits_default();
    l.idle_timeout_s = 1;
    l.requests_per_second = 1000;
    l.request_burst = 1000;
    l.threads = 2;
    return l;
}

static uint16_t port_of(const char *bound) {
    const char *colon = strrchr(bound, ':');
    return colon ? (uint16_t)atoi(colon + 1) : 0;
}

static void test_rate_limit(void) {
    gd_http_limits l = test_limits();
    l.requests_per_second = 1;
    l.request_burst = 3;
    gd_http_server *srv = NULL;
    char bound[64];
    CHECK_OK(gd_http_server_start(&srv, "127.0.0.1:0", &l, &g_handler, bound, sizeof bound));
    if (srv == NULL)
        return;
    unsigned ok = 0, limited = 0, refused_before = atomic_load(&g_fake.refused_rate);
    for (int i = 0; i < 8; i++) {
        reply r = ask_port(port_of(bound), "GET", "/v1/status", NULL);
        ok += r.status == 200;
        if (r.status == 429) {
            limited++;
            CHECK_STR_EQ(header(&r, "Retry-After"), "1");
        }
        if (i < 3)
            CHECK(r.status == 200);
        reply_free(&r);
    }
    /* Eight requests in well under 5 s at 1/s after a burst of 3. */
    CHECK(ok + limited == 8);
    CHECK(limited >= 3);
    /* Each 429 is counted for the operator's metrics. */
    CHECK(atomic_load(&g_fake.refused_rate) - refused_before == limited);
    gd_http_server_stop(srv);
}

static void test_per_ip_connections(void) {
    gd_http_limits l = test_limits();
    l.idle_timeout_s = 5;
    l.max_connections_per_ip = 2;
    gd_http_server *srv = NULL;
    char bound[64];
    CHECK_OK(gd_http_server_start(&srv, "127.0.0.1:0", &l, &g_handler, bound, sizeof bound));
    if (srv == NULL)
        return;
    uint16_t port = port_of(bound);
    unsigned refused_before = atomic_load(&g_fake.refused_connections);
    int a = dial(port), b = dial(port);
    usleep(200000); /* let the server accept both */
    reply r = ask_port(port, "GET", "/v1/status", NULL);
    CHECK(r.status == 0 && !r.timed_out); /* the third is closed at once */
    reply_free(&r);
    /* ... and counted for the operator's metrics. */
    CHECK(atomic_load(&g_fake.refused_connections) - refused_before == 1);
    close(a);
    close(b);
    unsigned status = 0;
    for (int i = 0; i < 20 && status != 200; i++) {
        usleep(50000);
        r = ask_port(port, "GET", "/v1/status", NULL);
        status = r.status;
        reply_free(&r);
    }
    CHECK(status == 200);
    gd_http_server_stop(srv);
}

static void test_ipv6(void) {
    gd_http_server *srv = NULL;
    char bound[80];
    gd_http_limits l = test_limits();
    if (gd_http_server_start(&srv, "[::1]:0", &l, &g_handler, bound, sizeof bound) != GD_OK) {
        fprintf(stderr, "  no IPv6 loopback here (%s): skipped\n", gd_error_detail());
        return;
    }
    CHECK(strncmp(bound, "[::1]:", 6) == 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port_of(bound))};
    a.sin6_addr = in6addr_loopback;
    int fd = dial_addr((const struct sockaddr *)&a, sizeof a);
    CHECK(fd >= 0);
    if (fd >= 0) {
        static const char req[] = "GET /v1/status HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
        send_all(fd, req, sizeof req - 1);
        reply r = read_reply(fd);
        CHECK(r.status == 200);
        reply_free(&r);
        close(fd);
    }
    gd_http_server_stop(srv);
}

static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static void test_start_errors(void) {
    char bound[64] = "";
    gd_http_server *srv = NULL;
    gd_http_limits l = test_limits();
    /* The address in use: the system's reason comes back. */
    char taken[64];
    snprintf(taken, sizeof taken, "127.0.0.1:%u", (unsigned)g_port);
    CHECK_STATUS(gd_http_server_start(&srv, taken, &l, &g_handler, bound, sizeof bound),
                 GD_ERR_NETWORK);
    CHECK(strstr(gd_error_detail(), "Address already in use") != NULL);
    static const char *bad[] = {"127.0.0.1", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:",
                                "example.com:80", "[::1]80", "[::1:80", ":80", "1.2.3:80", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_STATUS(gd_http_server_start(&srv, bad[i], &l, &g_handler, bound, sizeof bound),
                     GD_ERR_INVALID);
    CHECK_STATUS(gd_http_server_start(&srv, NULL, &l, &g_handler, bound, sizeof bound),
                 GD_ERR_INVALID);
    gd_http_limits zero = l;
    zero.requests_per_second = 0;
    CHECK_STATUS(gd_http_server_start(&srv, "127.0.0.1:0", &zero, &g_handler, bound, sizeof bound),
                 GD_ERR_INVALID);
    zero = l;
    zero.connection_memory = 1024;
    CHECK_STATUS(gd_http_server_start(&srv, "127.0.0.1:0", &zero, &g_handler, bound, sizeof bound),
                 GD_ERR_INVALID);
    gd_http_handler none = {0};
    CHECK_STATUS(gd_http_server_start(&srv, "127.0.0.1:0", &l, &none, bound, sizeof bound),
                 GD_ERR_INVALID);
    CHECK(srv == NULL);
}

/* The highest open descriptor number. */
static int highest_fd(void) {
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int high = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && atoi(e->d_name) > high)
            high = atoi(e->d_name);
    closedir(d);
    return high;
}

/* A start that fails inside libmicrohttpd (out of descriptors once the
 * socket is bound) reports it and leaves nothing open. In a child, as the
 * descriptor limit is the process's. */
static void test_start_failure_releases(void) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* Exactly two descriptors free: the socket, and one for libmicrohttpd. */
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = (rlim_t)highest_fd() + 1;
        setrlimit(RLIMIT_NOFILE, &rl);
        int spare[2] = {-1, -1};
        for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) {
            if (spare[1] >= 0)
                continue; /* the first two are the spare ones, the rest stay open */
            spare[spare[0] < 0 ? 0 : 1] = fd;
        }
        close(spare[0]);
        close(spare[1]);
        int before = open_fds();
        gd_http_limits l = test_limits();
        l.threads = 16;
        gd_http_server *srv = NULL;
        gd_error_clear();
        gd_status s = gd_http_server_start(&srv, "127.0.0.1:0", &l, &g_handler, NULL, 0);
        int after = open_fds();
        fprintf(stderr, "  start with two descriptors free: %s: %s (%d open before, %d after)\n",
                gd_status_name(s), gd_error_detail(), before, after);
        _exit(s == GD_ERR_NETWORK && srv == NULL && after == before ? 0 : 1);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_stop_releases(void) {
    int before = open_fds();
    gd_http_server *srv = NULL;
    gd_http_limits l = test_limits();
    CHECK_OK(gd_http_server_start(&srv, "localhost:0", &l, &g_handler, NULL, 0));
    gd_http_server_stop(srv);
    gd_http_server_stop(NULL);
    CHECK(open_fds() == before);
}

int main(void) {
    fake_setup(&g_fake);
    gd_http_limits l = test_limits();
    gd_http_server *srv = NULL;
    char bound[64];
    CHECK_OK(gd_http_server_start(&srv, "127.0.0.1:0", &l, &g_handler, bound, sizeof bound));
    if (srv == NULL)
        return gd_test_finish();
    CHECK(strncmp(bound, "127.0.0.1:", 10) == 0);
    g_port = port_of(bound);
    RUN_TEST(test_every_path_kind);
    RUN_TEST(test_traversal);
    RUN_TEST(test_nul_in_target);
    RUN_TEST(test_ranges);
    RUN_TEST(test_head);
    RUN_TEST(test_proof);
    RUN_TEST(test_peer_client);
    RUN_TEST(test_peer_client_into_file);
    RUN_TEST(test_file_kinds);
    RUN_TEST(test_methods_and_bodies);
    RUN_TEST(test_huge_headers);
    RUN_TEST(test_slow_client);
    RUN_TEST(test_trickling_client);
    RUN_TEST(test_count);
    RUN_TEST(test_rate_limit);
    RUN_TEST(test_per_ip_connections);
    RUN_TEST(test_ipv6);
    RUN_TEST(test_start_errors);
    RUN_TEST(test_start_failure_releases);
    RUN_TEST(test_stop_releases);
    gd_http_server_stop(srv);
    return gd_test_finish();
}
