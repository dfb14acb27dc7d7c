/* HTTP side of the localnet RPC over libmicrohttpd. */
#include "localnet/rpc_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/log.h"

struct gd_rpc_server {
    struct MHD_Daemon *daemon;
    gd_node *node;
    char address[64];
};

/* Per-connection request state while the body arrives. */
typedef struct gd_http_request {
    gd_buf body;
    bool too_large;
} gd_http_request;

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
        return MHD_YES;
    }
    if (*upload_size > 0) {
        /* Keep reading an oversized body (to answer it), but do not store it. */
        if (!r->too_large && r->body.len + *upload_size > GD_RPC_MAX_BODY) {
            r->too_large = true;
            gd_buf_free(&r->body);
        }
        if (!r->too_large && gd_buf_append(&r->body, upload, *upload_size) != GD_OK)
            r->too_large = true;
        *upload_size = 0;
        return MHD_YES;
    }
    gd_rpc_request req = {0};
    gd_status s = GD_OK;
    bool any_error = false;
    json_t *answer = NULL;
    unsigned status = MHD_HTTP_OK;
    if (r->too_large) {
        answer = gd_plain_error(GD_RPC_ERR_INVALID_REQUEST, "Invalid Request",
                                "error reading request body: http: request body too large");
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    } else if (strcmp(method, "POST") == 0) {
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
    (void)cls;
    (void)conn;
    (void)code;
    gd_http_request *r = *con_cls;
    if (r) {
        gd_buf_free(&r->body);
        free(r);
        *con_cls = NULL;
    }
}

static gd_status gd_parse_listen(const char *listen, struct sockaddr_in *addr) {
    char host[64];
    const char *colon = strrchr(listen, ':');
    if (strncmp(listen, "tcp://", 6) == 0)
        listen += 6;
    colon = strrchr(listen, ':');
    if (colon == NULL || (size_t)(colon - listen) >= sizeof host)
        return gd_fail(GD_ERR_INVALID, "--rpc '%s' must be host:port", listen);
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end != '\0' || port < 0 || port > 65535)
        return gd_fail(GD_ERR_INVALID, "--rpc '%s' has a bad port", listen);
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &addr->sin_addr) != 1)
        return gd_fail(GD_ERR_INVALID, "--rpc '%s': host must be an IPv4 address", listen);
    return GD_OK;
}

gd_status gd_rpc_server_start(gd_rpc_server **out, gd_node *node, const char *listen,
                              char *bound, size_t bound_cap) {
    struct sockaddr_in addr;
    GD_TRY(gd_parse_listen(listen, &addr));
    gd_rpc_server *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    srv->node = node;
    srv->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, gd_handle, srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, 4u,
        MHD_OPTION_CONNECTION_LIMIT, 900u, MHD_OPTION_CONNECTION_TIMEOUT, 60u,
        MHD_OPTION_NOTIFY_COMPLETED, gd_request_done, NULL, MHD_OPTION_UNESCAPE_CALLBACK,
        gd_no_unescape, NULL, MHD_OPTION_END);
    if (srv->daemon == NULL) {
        free(srv);
        return gd_fail(GD_ERR_NETWORK, "cannot listen on %s (address in use?)", listen);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
    snprintf(srv->address, sizeof srv->address, "tcp://%s:%u", ip,
             info ? (unsigned)info->port : (unsigned)ntohs(addr.sin_port));
    snprintf(bound, bound_cap, "%s:%u", ip, info ? (unsigned)info->port : (unsigned)ntohs(addr.sin_port));
    GD_LOG_INFO("localnet", "RPC listening on %s", bound);
    *out = srv;
    return GD_OK;
}

void gd_rpc_server_stop(gd_rpc_server *srv) {
    if (srv == NULL)
        return;
    MHD_stop_daemon(srv->daemon);
    free(srv);
}
