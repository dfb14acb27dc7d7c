/* A loopback HTTP server for tests: it accepts connections on 127.0.0.1 at
 * a free port and hands each request to a handler, which decides the status,
 * body, a delay, or to drop the connection without answering. Used to drive
 * the RPC client through success, error-code, malformed, timeout and
 * connection-failure paths. */
#ifndef GD_TESTS_SUPPORT_MOCK_HTTP_H
#define GD_TESTS_SUPPORT_MOCK_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct gd_mock_request {
    char method[16];
    char target[512];
    const char *body;
    size_t body_len;
    json_t *rpc;            /* the parsed JSON-RPC request, or NULL */
    const char *rpc_method; /* its "method", or "" */
    json_t *rpc_params;     /* its "params" (borrowed), or NULL */
    json_t *rpc_id;         /* its "id" (borrowed), or NULL */
} gd_mock_request;

typedef struct gd_mock_response {
    int status;       /* default 200 */
    char *body;       /* malloc'd by the handler; freed by the server */
    int delay_ms;     /* wait before answering */
    bool drop;        /* close the connection without any answer */
    /* A dripping peer instead of body: declare drip_total bytes, then send
     * drip_bytes of them every drip_ms until all are sent, the client
     * hangs up or the server stops. */
    int drip_ms;
    size_t drip_bytes, drip_total;
} gd_mock_response;

typedef void (*gd_mock_handler)(void *ctx, const gd_mock_request *req, gd_mock_response *resp);

typedef struct gd_mock_server gd_mock_server;

/* Starts serving on a free loopback port in a background thread. */
gd_mock_server *gd_mock_start(gd_mock_handler handler, void *ctx);
const char *gd_mock_url(const gd_mock_server *server);
/* Number of requests handled so far. */
int gd_mock_count(const gd_mock_server *server);
void gd_mock_stop(gd_mock_server *server);

/* Fills resp with a JSON-RPC result (result is consumed). */
void gd_mock_result(gd_mock_response *resp, const gd_mock_request *req, json_t *result);
/* Fills resp with a JSON-RPC error, HTTP 500 as CometBFT sends it. */
void gd_mock_error(gd_mock_response *resp, const gd_mock_request *req, int code,
                   const char *message, const char *data);
/* Fills resp with a raw body. */
void gd_mock_raw(gd_mock_response *resp, int status, const char *body);

/* A loopback URL on which nothing listens (connection refused). */
void gd_mock_refused_url(char *out, size_t cap);

#endif
