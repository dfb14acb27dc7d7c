/* Loopback HTTP/1.1 test server: one request per connection. */
#include "tests/support/mock_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct gd_mock_server {
    int listen_fd;
    char url[64];
    gd_mock_handler handler;
    void *ctx;
    pthread_t thread;
    atomic_int stop;
    atomic_int count;
};

static int gd_listen_loopback(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

/* Reads one request: headers, then Content-Length bytes of body. */
static char *gd_read_request(int fd, size_t *total, size_t *header_len) {
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    size_t need = 0;
    while (buf) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            break;
        if (len == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb)
                break;
            buf = nb;
        }
        ssize_t n = recv(fd, buf + len, cap - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end && need == 0) {
            *header_len = (size_t)(end - buf) + 4;
            size_t body = 0;
            char *h = strcasestr(buf, "\r\ncontent-length:");
            if (h && h < end)
                body = (size_t)strtoul(h + 17, NULL, 10);
            need = *header_len + body;
        }
        if (need && len >= need) {
            *total = len;
            return buf;
        }
    }
    free(buf);
    return NULL;
}

/* False once the client has gone. */
static bool gd_send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* Waits ms, or less once the server stops. */
static void gd_wait_unless_stopped(gd_mock_server *s, int ms) {
    for (int t = 0; t < ms && !atomic_load(&s->stop); t += 50) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void gd_drip(gd_mock_server *s, int fd, const gd_mock_response *resp) {
    char head[160];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     resp->status, resp->drip_total);
    char *burst = calloc(resp->drip_bytes ? resp->drip_bytes : 1, 1);
    bool ok = burst != NULL && gd_send_all(fd, head, (size_t)n);
    for (size_t sent = 0; ok && sent < resp->drip_total && !atomic_load(&s->stop);) {
        size_t len = resp->drip_total - sent < resp->drip_bytes ? resp->drip_total - sent
                                                                 : resp->drip_bytes;
        ok = gd_send_all(fd, burst, len);
        sent += len;
        gd_wait_unless_stopped(s, resp->drip_ms);
    }
    free(burst);
}

static void gd_serve_one(gd_mock_server *s, int fd) {
    size_t total = 0, header_len = 0;
    char *raw = gd_read_request(fd, &total, &header_len);
    if (raw == NULL)
        return;
    gd_mock_request req;
    memset(&req, 0, sizeof req);
    sscanf(raw, "%15s %511s", req.method, req.target);
    req.body = raw + header_len;
    req.body_len = total - header_len;
    req.rpc_method = "";
    req.rpc = json_loadb(req.body, req.body_len, 0, NULL);
    if (json_is_object(req.rpc)) {
        const char *m = json_string_value(json_object_get(req.rpc, "method"));
        req.rpc_method = m ? m : "";
        req.rpc_params = json_object_get(req.rpc, "params");
        req.rpc_id = json_object_get(req.rpc, "id");
    }
    gd_mock_response resp = {.status = 200};
    atomic_fetch_add(&s->count, 1);
    s->handler(s->ctx, &req, &resp);
    if (resp.delay_ms > 0) {
        struct timespec ts = {resp.delay_ms / 1000, (resp.delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (resp.drip_ms > 0 && !resp.drop) {
        gd_drip(s, fd, &resp);
    } else if (!resp.drop) {
        const char *body = resp.body ? resp.body : "";
        char head[256];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: "
                         "%zu\r\nConnection: close\r\n\r\n",
                         resp.status, strlen(body));
        gd_send_all(fd, head, (size_t)n);
        gd_send_all(fd, body, strlen(body));
    }
    free(resp.body);
    json_decref(req.rpc);
    free(raw);
}

static void *gd_mock_loop(void *arg) {
    gd_mock_server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        gd_serve_one(s, fd);
        close(fd);
    }
    return NULL;
}

gd_mock_server *gd_mock_start(gd_mock_handler handler, void *ctx) {
    gd_mock_server *s = calloc(1, sizeof *s);
    int port = 0;
    if (s == NULL)
        return NULL;
    s->listen_fd = gd_listen_loopback(&port);
    if (s->listen_fd < 0) {
        free(s);
        return NULL;
    }
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", port);
    s->handler = handler;
    s->ctx = ctx;
    if (pthread_create(&s->thread, NULL, gd_mock_loop, s) != 0) {
        close(s->listen_fd);
        free(s);
        return NULL;
    }
    return s;
}

const char *gd_mock_url(const gd_mock_server *s) { return s->url; }

int gd_mock_count(const gd_mock_server *s) { return atomic_load(&((gd_mock_server *)s)->count); }

void gd_mock_stop(gd_mock_server *s) {
    if (s == NULL)
        return;
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
    free(s);
}

static json_t *gd_mock_id(const gd_mock_request *req) {
    return req->rpc_id ? json_incref(req->rpc_id) : json_integer(-1);
}

void gd_mock_result(gd_mock_response *resp, const gd_mock_request *req, json_t *result) {
    json_t *env = json_pack("{s:s,s:o,s:o}", "jsonrpc", "2.0", "id", gd_mock_id(req), "result",
                            result);
    resp->body = json_dumps(env, JSON_COMPACT);
    json_decref(env);
}

void gd_mock_error(gd_mock_response *resp, const gd_mock_request *req, int code,
                   const char *message, const char *data) {
    json_t *env = json_pack("{s:s,s:o,s:{s:i,s:s,s:s}}", "jsonrpc", "2.0", "id", gd_mock_id(req),
                            "error", "code", code, "message", message, "data", data ? data : "");
    resp->status = 500;
    resp->body = json_dumps(env, JSON_COMPACT);
    json_decref(env);
}

void gd_mock_raw(gd_mock_response *resp, int status, const char *body) {
    resp->status = status;
    resp->body = strdup(body);
}

void gd_mock_refused_url(char *out, size_t cap) {
    /* Bind a port, then close it: nothing listens there afterwards. */
    int port = 0;
    int fd = gd_listen_loopback(&port);
    if (fd >= 0)
        close(fd);
    snprintf(out, cap, "http://127.0.0.1:%d", port ? port : 9);
}
