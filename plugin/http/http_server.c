/* The daemon's HTTP server over libmicrohttpd (plugin/http/http_server.h): the
 * daemon's life, its limits, and the order in which a request is judged
 * (rate, method, body, path) before the handler sees it. */
#include "plugin/http/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/conn_watch.h"
#include "common/listen.h"
#include "common/log.h"
#include "plugin/http/http_path.h"
#include "plugin/http/http_rate.h"
#include "plugin/http/http_reply.h"

/* Less than this per connection and libmicrohttpd cannot hold an ordinary
 * request and its answer's headers. */
#define GD_HTTP_MIN_CONNECTION_MEMORY 8192u
#define GD_HTTP_MAX_THREADS 64u

struct gd_http_server {
    struct MHD_Daemon *daemon;
    gd_http_handler handler;
    gd_http_limits limits;
    gd_http_rate *rate;
    gd_conn_watch *watch;  /* each request arrives whole within idle_timeout_s */
    /* Refusals by reason since the last warning, and when that was. */
    pthread_mutex_t refused_mu;
    uint64_t refused[2];
    int64_t refused_warned_ms[2];
};

static const char *const gd_http_refusal_names[2] = {"rate", "connections"};

/* A client turned away: counted for the handler, and a warning a minute at
 * most per reason, so a flood does not flood the operator's log. */
static void gd_http_refuse(gd_http_server *srv, int why) {
    if (srv->handler.refused)
        srv->handler.refused(srv->handler.ctx, gd_http_refusal_names[why]);
    int64_t now = gd_clock_ms();
    uint64_t n = 0;
    pthread_mutex_lock(&srv->refused_mu);
    srv->refused[why]++;
    if (now - srv->refused_warned_ms[why] >= 60000) {
        n = srv->refused[why];
        srv->refused[why] = 0;
        srv->refused_warned_ms[why] = now;
    }
    pthread_mutex_unlock(&srv->refused_mu);
    if (n > 0)
        GD_LOG_WARN("http", "turned %" PRIu64 " client%s away (%s) since the last such warning: "
                            "%s",
                    n, n == 1 ? "" : "s", gd_http_refusal_names[why],
                    why == 0 ? "429, over requests_per_second from one address"
                             : "over max_connections, or max_connections_per_ip from one "
                               "address");
}

gd_http_limits gd_http_limits_default(void) {
    return (gd_http_limits){
        .max_connections = 256,
        .max_connections_per_ip = 16,
        .idle_timeout_s = 10,
        .connection_memory = 32 * 1024,
        .requests_per_second = 50,
        .request_burst = 100,
        .threads = 4,
    };
}

static gd_status gd_http_limits_check(const gd_http_limits *l) {
    if (l->max_connections == 0 || l->max_connections_per_ip == 0 || l->idle_timeout_s == 0 ||
        l->requests_per_second == 0 || l->request_burst == 0 || l->threads == 0)
        return gd_fail(GD_ERR_INVALID, "HTTP limits must all be at least 1");
    if (l->threads > GD_HTTP_MAX_THREADS)
        return gd_fail(GD_ERR_INVALID, "HTTP threads must be at most %u", GD_HTTP_MAX_THREADS);
    /* Each thread of the pool takes its share of the connections. */
    if (l->max_connections < l->threads)
        return gd_fail(GD_ERR_INVALID, "HTTP max_connections must be at least the threads (%u)",
                       (unsigned)l->threads);
    if (l->connection_memory < GD_HTTP_MIN_CONNECTION_MEMORY)
        return gd_fail(GD_ERR_INVALID, "HTTP connection_memory must be at least %u bytes",
                       GD_HTTP_MIN_CONNECTION_MEMORY);
    return GD_OK;
}

static uint64_t gd_http_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool gd_http_rate_allows(gd_http_server *srv, struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    uint8_t key[16];
    gd_http_rate_key(ci ? ci->client_addr : NULL, key);
    return gd_http_rate_take(srv->rate, key, gd_http_now_us());
}

/* Any request body at all: this server only answers GET and HEAD. A
 * Content-Length of zeros is no body; anything else (even malformed) is. */
static bool gd_http_has_body(struct MHD_Connection *conn) {
    const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    return te != NULL || (cl != NULL && (cl[0] == '\0' || cl[strspn(cl, "0")] != '\0'));
}

/* The handler's answer to a parsed request, or its error as text. */
static enum MHD_Result gd_http_serve(gd_http_server *srv, struct MHD_Connection *conn,
                                     gd_http_exchange *ex, const gd_artifact_req *req) {
    gd_artifact_answer a;
    memset(&a, 0, sizeof a);
    unsigned code = 500;
    gd_error_clear();
    gd_status s = srv->handler.answer(srv->handler.ctx, req, &a, &code);
    enum MHD_Result r;
    if (s == GD_OK) {
        r = gd_http_reply_answer(conn, ex, &a);
    } else {
        if (code < 400 || code > 599)
            code = 500; /* an error is never sent as success */
        const char *detail = gd_error_detail();
        r = gd_http_reply_text(conn, ex, code, detail[0] ? detail : gd_status_name(s), NULL,
                               NULL);
    }
    gd_artifact_answer_free(&a);
    return r;
}

static enum MHD_Result gd_http_judge(gd_http_server *srv, struct MHD_Connection *conn,
                                     gd_http_exchange *ex, const char *method) {
    if (!gd_http_rate_allows(srv, conn)) {
        gd_http_refuse(srv, 0);
        return gd_http_reply_text(conn, ex, 429, "too many requests from this address",
                                  "Retry-After", "1");
    }
    gd_artifact_req req;
    unsigned code = 400;
    gd_status s = gd_http_path_parse(&req, method, ex->target, &code);
    if (s != GD_OK && code == 405)
        return gd_http_reply_text(conn, ex, 405, gd_error_detail(), "Allow", "GET, HEAD");
    if (gd_http_has_body(conn))
        return gd_http_reply_text(conn, ex, 413, "request bodies are not accepted", NULL, NULL);
    if (s != GD_OK)
        return gd_http_reply_text(conn, ex, code, gd_error_detail(), NULL, NULL);
    return gd_http_serve(srv, conn, ex, &req);
}

static gd_conn_slot *gd_http_slot(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* libmicrohttpd's access handler. Everything is decided on the first call,
 * when the headers are in; a body is never read, only refused. */
static enum MHD_Result gd_http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload, size_t *upload_size, void **con_cls) {
    (void)url; /* already cut at '?' and percent-decoded: ex->target is the raw one */
    (void)version;
    (void)upload;
    gd_http_exchange *ex = *con_cls;
    if (ex == NULL)
        return MHD_NO; /* gd_http_begin could not allocate: drop the connection */
    if (ex->answered) {
        *upload_size = 0;
        return MHD_YES;
    }
    gd_http_server *srv = cls;
    gd_conn_watch_disarm(srv->watch, gd_http_slot(conn)); /* the request is in */
    ex->head = method != NULL && strcmp(method, "HEAD") == 0;
    /* The proof's hex then takes half the connection's memory, leaving the
     * other half for the request and the rest of the answer's headers. */
    ex->proof_max = ((gd_http_server *)cls)->limits.connection_memory / 4;
    return gd_http_judge(cls, conn, ex, method);
}

/* Called with the raw request target before libmicrohttpd decodes it; the
 * exchange it returns is the request's state until gd_http_completed. */
static void *gd_http_begin(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)cls;
    (void)conn;
    gd_http_exchange *ex = calloc(1, sizeof *ex);
    if (ex == NULL)
        return NULL;
    size_t len = uri ? strnlen(uri, GD_HTTP_PATH_MAX + 1) : 0;
    memcpy(ex->target, uri ? uri : "", len);
    ex->target[len] = '\0';
    return ex;
}

static void gd_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe) {
    gd_http_server *srv = cls;
    gd_http_exchange *ex = *con_cls;
    gd_conn_watch_arm(srv->watch, gd_http_slot(conn)); /* the next request's deadline */
    if (ex == NULL)
        return;
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && ex->answered && srv->handler.count)
        srv->handler.count(srv->handler.ctx, ex->body_len);
    free(ex);
    *con_cls = NULL;
}

/* Each connection is watched from its opening to its closing. */
static void gd_http_connection_event(void *cls, struct MHD_Connection *conn,
                                     void **socket_context,
                                     enum MHD_ConnectionNotificationCode code) {
    gd_http_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? gd_conn_watch_add(srv->watch, ci->connect_fd) : NULL;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        gd_conn_watch_remove(srv->watch, *socket_context);
        *socket_context = NULL;
    }
}

/* libmicrohttpd's last message on this thread: a failed start says why
 * only through its log. */
static _Thread_local char gd_http_mhd_said[160];

static void gd_http_log(void *cls, const char *fmt, va_list ap) GD_PRINTF(2, 0);

/* libmicrohttpd's own messages are mostly about misbehaving clients:
 * debug level, so a hostile client cannot flood the operator's log. */
static void gd_http_log(void *cls, const char *fmt, va_list ap) {
    gd_http_server *srv = cls;
    vsnprintf(gd_http_mhd_said, sizeof gd_http_mhd_said, fmt, ap);
    gd_http_mhd_said[strcspn(gd_http_mhd_said, "\r\n")] = '\0';
    if (srv != NULL && strstr(gd_http_mhd_said, "reached connection limit") != NULL)
        gd_http_refuse(srv, 1);
    GD_LOG_DEBUG("http", "libmicrohttpd: %s", gd_http_mhd_said);
}

static struct MHD_Daemon *gd_http_daemon_start(gd_http_server *srv, int fd) {
    const gd_http_limits *l = &srv->limits;
    return MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
        gd_http_access, srv, MHD_OPTION_EXTERNAL_LOGGER, gd_http_log, srv,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)l->threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)l->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)l->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)l->idle_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)l->connection_memory,
        MHD_OPTION_URI_LOG_CALLBACK, gd_http_begin, srv, MHD_OPTION_NOTIFY_COMPLETED,
        gd_http_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, gd_http_connection_event, srv,
        MHD_OPTION_END);
}

/* Starts the daemon on the listening socket fd, which it takes in every
 * case. */
static gd_status gd_http_daemon_run(gd_http_server *srv, int fd, const char *where) {
    struct stat listen_st;
    if (fstat(fd, &listen_st) != 0) {
        gd_status s = gd_fail(GD_ERR_NETWORK, "listening on %s: fstat: %s", where, strerror(errno));
        close(fd);
        return s;
    }
    gd_http_mhd_said[0] = '\0';
    srv->daemon = gd_http_daemon_start(srv, fd);
    if (srv->daemon != NULL)
        return GD_OK;
    gd_listen_close_if_same(fd, &listen_st);
    return gd_fail(GD_ERR_NETWORK, "cannot start the HTTP server on %s: %s", where,
                   gd_http_mhd_said[0] ? gd_http_mhd_said : "libmicrohttpd refused");
}

/* The operator sees where the node serves and with which limits. */
static void gd_http_announce(const gd_http_server *srv, const char *where, bool loopback) {
    if (!loopback)
        GD_LOG_WARN("http", "serving on %s, not a loopback address: whoever can reach it can "
                    "fetch what this node serves", where);
    const gd_http_limits *l = &srv->limits;
    GD_LOG_INFO("http", "serving on %s: %u connections (%u per address), %u s idle and "
                "request timeout, "
                "%u bytes per connection, %u requests/s per address (burst %u), %u threads",
                where, l->max_connections, l->max_connections_per_ip, l->idle_timeout_s,
                l->connection_memory, l->requests_per_second, l->request_burst, l->threads);
}

static void gd_http_free(gd_http_server *srv) {
    gd_conn_watch_stop(srv->watch); /* after the daemon: it removed every slot */
    gd_http_rate_free(srv->rate);
    pthread_mutex_destroy(&srv->refused_mu);
    free(srv);
}

gd_status gd_http_server_start(gd_http_server **out, const char *listen,
                               const gd_http_limits *limits, const gd_http_handler *h,
                               char *bound, size_t bound_cap) {
    if (out == NULL || h == NULL || h->answer == NULL)
        return gd_fail(GD_ERR_INVALID, "the HTTP server needs a handler with an answer function");
    gd_http_server *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    srv->handler = *h;
    srv->limits = limits ? *limits : gd_http_limits_default();
    pthread_mutex_init(&srv->refused_mu, NULL);
    char where[INET6_ADDRSTRLEN + 16] = "";
    int fd = -1;
    bool loopback = false;
    gd_status s = gd_http_limits_check(&srv->limits);
    if (s == GD_OK)
        s = gd_http_rate_new(&srv->rate, srv->limits.requests_per_second,
                             srv->limits.request_burst);
    if (s == GD_OK)
        s = gd_conn_watch_start(&srv->watch, srv->limits.idle_timeout_s * 1000u);
    if (s == GD_OK)
        s = gd_listen_open(listen, &fd, where, sizeof where, &loopback);
    if (s == GD_OK)
        s = gd_http_daemon_run(srv, fd, where);
    if (s != GD_OK) {
        gd_http_free(srv);
        return s;
    }
    gd_http_announce(srv, where, loopback);
    if (bound != NULL && bound_cap > 0)
        snprintf(bound, bound_cap, "%s", where);
    *out = srv;
    return GD_OK;
}

void gd_http_server_stop(gd_http_server *srv) {
    if (srv == NULL)
        return;
    MHD_stop_daemon(srv->daemon); /* also closes the listening socket */
    gd_http_free(srv);
}
