/* HTTP side of the localnet RPC over libmicrohttpd: the daemon's life and
 * limits, and how a request's body is taken in before it is answered. */
#include "localnet/rpc_server.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/conn_watch.h"
#include "common/listen.h"
#include "common/log.h"
#include "common/parse.h"

/* A fixed pool whatever the number of clients: a slow client costs a
 * connection slot and its memory, never a thread. */
#define GD_RPC_THREADS 4u
/* Per connection, for the request line, headers and the answer's headers
 * (libmicrohttpd's own default); bodies are kept apart, up to
 * GD_RPC_MAX_BODY. */
#define GD_RPC_CONNECTION_MEMORY 32768u
#define GD_RPC_LIMIT_MAX 100000u
#define GD_RPC_IDLE_MAX_S 3600u
/* At most one "connection limit reached" warning per this many seconds, so
 * a flood of refused clients cannot flood the log. */
#define GD_RPC_REFUSAL_WARN_S 10

struct gd_rpc_server {
    struct MHD_Daemon *daemon;
    gd_node *node;
    gd_rpc_limits limits;
    char address[80];
    atomic_uint open;         /* connections libmicrohttpd holds */
    atomic_llong warned_at_s; /* last refusal warning, CLOCK_MONOTONIC seconds */
    gd_conn_watch *watch;     /* each request arrives whole within the idle timeout */
};

/* Per-request state while the body arrives. */
typedef struct gd_http_request {
    gd_buf body;
    bool answered; /* an answer is queued before the body was read */
} gd_http_request;

gd_rpc_limits gd_rpc_limits_default(void) {
    return (gd_rpc_limits){.max_connections = 256, .max_connections_per_ip = 32,
                           .idle_timeout_s = 10};
}

gd_status gd_rpc_limits_check(const gd_rpc_limits *l) {
    if (l->max_connections < 1 || l->max_connections > GD_RPC_LIMIT_MAX)
        return gd_fail(GD_ERR_INVALID, "RPC max connections must be 1 to %u", GD_RPC_LIMIT_MAX);
    if (l->max_connections_per_ip < 1 || l->max_connections_per_ip > l->max_connections)
        return gd_fail(GD_ERR_INVALID, "RPC connections per address must be 1 to the max "
                       "connections (%u)", (unsigned)l->max_connections);
    if (l->idle_timeout_s < 1 || l->idle_timeout_s > GD_RPC_IDLE_MAX_S)
        return gd_fail(GD_ERR_INVALID, "RPC idle timeout must be 1 to %u seconds",
                       GD_RPC_IDLE_MAX_S);
    return GD_OK;
}

/* Values stay percent-encoded: gd_rpc_request_parse_uri decodes them. */
static size_t gd_no_unescape(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls;
    (void)c;
    return strlen(s);
}

typedef struct gd_query_builder {
    gd_buf text;
    bool failed;
} gd_query_builder;

static enum MHD_Result gd_collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value) {
    gd_query_builder *q = cls;
    (void)kind;
    if ((q->text.len && gd_buf_append_str(&q->text, "&") != GD_OK) ||
        gd_buf_append_str(&q->text, key) != GD_OK ||
        (value && (gd_buf_append_str(&q->text, "=") != GD_OK ||
                   gd_buf_append_str(&q->text, value) != GD_OK)))
        q->failed = true;
    return MHD_YES;
}

static enum MHD_Result gd_send_json(struct MHD_Connection *conn, unsigned status, json_t *j) {
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (text == NULL) {
        static const char oom[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
                                  "\"message\":\"Internal error\",\"data\":\"out of memory\"}}";
        text = strdup(oom);
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        if (text == NULL)
            return MHD_NO;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static json_t *gd_plain_error(int code, const char *message, const char *data) {
    return json_pack("{s:s,s:n,s:{s:i,s:s,s:s}}", "jsonrpc", "2.0", "id", "error", "code", code,
                     "message", message, "data", data);
}

/* Answers a parsed request: one object, or an array for a batch. */
static json_t *gd_answer_request(gd_rpc_server *srv, const gd_rpc_request *req, bool *any_error) {
    *any_error = false;
    if (!req->batch) {
        *any_error = req->calls[0].error_code != 0;
        return gd_rpc_answer(srv->node, srv->address, &req->calls[0]);
    }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < req->n_calls; i++) {
        json_t *r = gd_rpc_answer(srv->node, srv->address, &req->calls[i]);
        if (r == NULL || json_array_append_new(arr, r) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* A Content-Length above GD_RPC_MAX_BODY (or too long to be a number). */
static bool gd_declared_too_large(struct MHD_Connection *conn) {
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    uint64_t n;
    if (cl == NULL)
        return false;
    return gd_parse_u64(&n, cl) != GD_OK || n > GD_RPC_MAX_BODY;
}

/* 413 with CometBFT's JSON-RPC error for a body over max_body_bytes;
 * libmicrohttpd then closes the connection rather than read the rest.
 * Part way through a body (chunked, no length declared) libmicrohttpd
 * cannot queue an answer: the connection is closed without one. */
static enum MHD_Result gd_refuse_body(struct MHD_Connection *conn, gd_http_request *r) {
    r->answered = true;
    gd_buf_free(&r->body);
    return gd_send_json(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                        gd_plain_error(GD_RPC_ERR_INVALID_REQUEST, "Invalid Request",
                                       "error reading request body: http: request body too "
                                       "large"));
}

/* The request is in (or is answered before it is): its deadline stops. */
static void gd_request_in(gd_rpc_server *srv, struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    gd_conn_watch_disarm(srv->watch, ci ? ci->socket_context : NULL);
}

static enum MHD_Result gd_handle(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls) {
    gd_rpc_server *srv = cls;
    (void)version;
    gd_http_request *r = *con_cls;
    if (r == NULL) {
        r = calloc(1, sizeof *r);
        if (r == NULL)
            return MHD_NO;
        *con_cls = r;
        /* A body declared too large is refused now, before a byte of it is
         * read (nor a 100 Continue sent). */
        if (gd_declared_too_large(conn)) {
            gd_request_in(srv, conn);
            return gd_refuse_body(conn, r);
        }
        return MHD_YES;
    }
    if (r->answered) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        /* A body that grows past the limit without declaring its length
         * (chunked) is cut off as soon as it does, not read to its end. */
        if (r->body.len + *upload_size > GD_RPC_MAX_BODY ||
            gd_buf_append(&r->body, upload, *upload_size) != GD_OK) {
            *upload_size = 0;
            gd_request_in(srv, conn);
            return gd_refuse_body(conn, r);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    gd_request_in(srv, conn);
    gd_rpc_request req = {0};
    gd_status s = GD_OK;
    bool any_error = false;
    json_t *answer = NULL;
    unsigned status = MHD_HTTP_OK;
    if (strcmp(method, "POST") == 0) {
        if (strcmp(url, "/") != 0 && strcmp(url, "") != 0) {
            answer = gd_plain_error(GD_RPC_ERR_METHOD_NOT_FOUND, "Method not found",
                                    "JSON-RPC requests go to /");
            status = MHD_HTTP_NOT_FOUND;
        } else {
            s = gd_rpc_request_parse_body(&req, r->body.len ? (const char *)r->body.data : "",
                                          r->body.len);
            if (s == GD_OK)
                answer = gd_answer_request(srv, &req, &any_error);
            /* A body that is not a request at all is an HTTP error too. */
            if (!req.batch && req.n_calls == 1 && req.calls[0].method == NULL)
                status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        }
    } else if (strcmp(method, "GET") == 0) {
        gd_query_builder q = {0};
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, gd_collect_arg, &q);
        if (q.failed || gd_buf_terminate(&q.text) != GD_OK) {
            s = gd_fail(GD_ERR_NOMEM, "out of memory");
        } else {
            s = gd_rpc_request_parse_uri(&req, url, q.text.len ? (const char *)q.text.data : "");
            if (s == GD_OK && req.n_calls == 1) {
                /* CometBFT answers URI calls with id -1. */
                json_decref(req.calls[0].id);
                req.calls[0].id = json_integer(-1);
            }
            if (s == GD_OK)
                answer = gd_answer_request(srv, &req, &any_error);
            if (s == GD_OK && answer && json_object_get(answer, "error"))
                status = req.calls[0].error_code == GD_RPC_ERR_METHOD_NOT_FOUND
                             ? MHD_HTTP_NOT_FOUND
                             : MHD_HTTP_INTERNAL_SERVER_ERROR;
        }
        gd_buf_free(&q.text);
    } else {
        answer = gd_plain_error(GD_RPC_ERR_INVALID_REQUEST, "Invalid Request",
                                "only GET and POST are served");
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
    }
    if (answer == NULL) {
        answer = gd_plain_error(GD_RPC_ERR_INTERNAL, "Internal error", gd_error_detail());
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
    gd_rpc_request_free(&req);
    return gd_send_json(conn, status, answer);
}

static void gd_request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                            enum MHD_RequestTerminationCode code) {
    gd_rpc_server *srv = cls;
    (void)code;
    /* The next request on this connection has its own deadline. */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    gd_conn_watch_arm(srv->watch, ci ? ci->socket_context : NULL);
    gd_http_request *r = *con_cls;
    if (r) {
        gd_buf_free(&r->body);
        free(r);
        *con_cls = NULL;
    }
}

/* Refuses a connection over the total limit at once (the client sees it
 * closed): libmicrohttpd's own limit, once reached, stops accepting, and
 * new clients would then wait in the kernel's queue until a slot frees. The
 * count can run over by a connection per thread in a burst. */
static enum MHD_Result gd_accept(void *cls, const struct sockaddr *addr, socklen_t len) {
    gd_rpc_server *srv = cls;
    (void)addr;
    (void)len;
    if (atomic_load(&srv->open) < srv->limits.max_connections)
        return MHD_YES;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long last = atomic_load(&srv->warned_at_s);
    if ((long long)now.tv_sec - last >= GD_RPC_REFUSAL_WARN_S &&
        atomic_compare_exchange_strong(&srv->warned_at_s, &last, (long long)now.tv_sec))
        GD_LOG_WARN("localnet", "RPC: %u connections open (the limit): refusing new ones until "
                    "some close", (unsigned)srv->limits.max_connections);
    return MHD_NO;
}

static void gd_connection_event(void *cls, struct MHD_Connection *conn, void **socket_context,
                                enum MHD_ConnectionNotificationCode code) {
    gd_rpc_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&srv->open, 1);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? gd_conn_watch_add(srv->watch, ci->connect_fd) : NULL;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&srv->open, 1);
        gd_conn_watch_remove(srv->watch, *socket_context); /* before the socket closes */
        *socket_context = NULL;
    }
}

/* libmicrohttpd's last message on this thread: a failed start says why
 * only through its log. */
static _Thread_local char gd_mhd_said[160];

static void gd_mhd_log(void *cls, const char *fmt, va_list ap) GD_PRINTF(2, 0);

/* Its messages are mostly about misbehaving clients (and every refusal
 * over the per-address limit): debug level, so a hostile client cannot
 * flood the operator's log. */
static void gd_mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    vsnprintf(gd_mhd_said, sizeof gd_mhd_said, fmt, ap);
    gd_mhd_said[strcspn(gd_mhd_said, "\r\n")] = '\0';
    GD_LOG_DEBUG("localnet", "libmicrohttpd: %s", gd_mhd_said);
}

/* Starts libmicrohttpd on the listening socket fd, which it takes in every
 * case. Its own connection limit (shared out among the threads) is set
 * far enough above ours that no thread ever reaches its share: gd_accept
 * is what refuses. */
static gd_status gd_daemon_start(gd_rpc_server *srv, int fd, const char *where) {
    struct stat listen_st;
    if (fstat(fd, &listen_st) != 0) {
        gd_status s = gd_fail(GD_ERR_NETWORK, "listening on %s: fstat: %s", where, strerror(errno));
        close(fd);
        return s;
    }
    const gd_rpc_limits *l = &srv->limits;
    unsigned mhd_limit = (l->max_connections + GD_RPC_THREADS) * GD_RPC_THREADS;
    gd_mhd_said[0] = '\0';
    srv->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, gd_accept, srv,
        gd_handle, srv, MHD_OPTION_EXTERNAL_LOGGER, gd_mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET,
        fd, MHD_OPTION_THREAD_POOL_SIZE, GD_RPC_THREADS, MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)l->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)l->idle_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)GD_RPC_CONNECTION_MEMORY,
        MHD_OPTION_NOTIFY_CONNECTION, gd_connection_event, srv, MHD_OPTION_NOTIFY_COMPLETED,
        gd_request_done, srv, MHD_OPTION_UNESCAPE_CALLBACK, gd_no_unescape, NULL,
        MHD_OPTION_END);
    if (srv->daemon != NULL)
        return GD_OK;
    gd_listen_close_if_same(fd, &listen_st);
    return gd_fail(GD_ERR_NETWORK, "cannot start the RPC server on %s: %s", where,
                   gd_mhd_said[0] ? gd_mhd_said : "libmicrohttpd refused");
}

/* The operator sees where the node serves and with which limits; a
 * listener off loopback is said loudly, as the RPC has no authentication. */
static void gd_announce(const gd_rpc_server *srv, const char *where, bool loopback) {
    if (!loopback)
        GD_LOG_WARN("localnet", "WARNING: the RPC listens on %s, which is not a loopback "
                    "address: anyone who can reach it can read the chain and submit "
                    "transactions (there is no authentication). Use --rpc 127.0.0.1:PORT "
                    "unless that is what you want", where);
    const gd_rpc_limits *l = &srv->limits;
    GD_LOG_INFO("localnet", "RPC listening on %s: %u connections (%u per address), %u s idle "
                "and request timeout", where, l->max_connections, l->max_connections_per_ip,
                l->idle_timeout_s);
}

gd_status gd_rpc_server_start(gd_rpc_server **out, gd_node *node, const char *listen,
                              const gd_rpc_limits *limits, char *bound, size_t bound_cap) {
    gd_rpc_limits l = limits ? *limits : gd_rpc_limits_default();
    GD_TRY(gd_rpc_limits_check(&l));
    if (strncmp(listen, "tcp://", 6) == 0) /* CometBFT's laddr form */
        listen += 6;
    gd_rpc_server *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    srv->node = node;
    srv->limits = l;
    atomic_init(&srv->open, 0);
    atomic_init(&srv->warned_at_s, -GD_RPC_REFUSAL_WARN_S);
    char where[64] = "";
    int fd = -1;
    bool loopback = false;
    gd_status s = gd_conn_watch_start(&srv->watch, l.idle_timeout_s * 1000u);
    if (s == GD_OK)
        s = gd_listen_open(listen, &fd, where, sizeof where, &loopback);
    if (s == GD_OK)
        s = gd_daemon_start(srv, fd, where);
    if (s != GD_OK) {
        gd_conn_watch_stop(srv->watch);
        free(srv);
        return s;
    }
    snprintf(srv->address, sizeof srv->address, "tcp://%s", where);
    snprintf(bound, bound_cap, "%s", where);
    gd_announce(srv, where, loopback);
    *out = srv;
    return GD_OK;
}

void gd_rpc_server_stop(gd_rpc_server *srv) {
    if (srv == NULL)
        return;
    MHD_stop_daemon(srv->daemon);
    gd_conn_watch_stop(srv->watch); /* after the daemon: it removed every slot */
    free(srv);
}
