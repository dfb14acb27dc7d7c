/* The daemon's HTTP server: transport only. It turns a request into a
 * gd_artifact_req (plugin/http/http_path.h), asks one handler for the answer and
 * sends it: bytes from memory, or a file with single byte ranges
 * (plugin/http/http_range.h), the chunk's proof hex-encoded in X-Gd-Proof.
 * What is served, and when, is entirely the handler's business.
 *
 * Built on libmicrohttpd with an internal epoll thread pool: a fixed number
 * of threads whatever the number of clients, so a slow client costs one
 * connection slot and some memory, never a thread. Every resource a client
 * can take is bounded by gd_http_limits. */
#ifndef GD_PLUGIN_HTTP_HTTP_SERVER_H
#define GD_PLUGIN_HTTP_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "plugin/member/artifact_request.h"

/* What a request is answered with: {interface table, context}. Both
 * functions run on the server's threads, several at once: they must be
 * thread-safe. */
typedef struct gd_http_handler {
    /* Fills out (zeroed by the server, and freed by it with
     * gd_artifact_answer_free whatever is returned) and returns GD_OK, or
     * returns an error status with *http_status set: 404 not found, 403 or
     * 425 not served yet in this window, 500 a local failure. The error's
     * detail (gd_fail) is sent as the text/plain body, so it must not hold
     * secrets or local paths. A file answer (out->path) must name a regular
     * file, not a symbolic link. content_type NULL means
     * application/octet-stream. */
    gd_status (*answer)(void *ctx, const gd_artifact_req *req, gd_artifact_answer *out,
                        unsigned *http_status);
    /* Optional (may be NULL): told the body bytes of each response sent in
     * full, errors included (0 for HEAD). A transfer the client aborts is
     * not counted, as libmicrohttpd does not say how far it got. */
    void (*count)(void *ctx, uint64_t bytes_out);
    /* Optional (may be NULL): told of each client the server turned away,
     * by reason: "rate" (a 429: over requests_per_second) or "connections"
     * (over max_connections; refusals over max_connections_per_ip are
     * silent in libmicrohttpd and not counted). The server also logs them,
     * a warning a minute at most per reason. */
    void (*refused)(void *ctx, const char *reason);
    void *ctx;
} gd_http_handler;

/* Bounds on what clients can take. Every field must be non-zero. */
typedef struct gd_http_limits {
    uint32_t max_connections;        /* all clients together; default 256 */
    uint32_t max_connections_per_ip; /* one address; default 16 */
    uint32_t idle_timeout_s;         /* a connection silent this long (an idle
                                      * client) is closed, and so is one whose
                                      * request has not arrived whole this long
                                      * after it opened or after its previous
                                      * answer (a slow one); default 10 */
    uint32_t connection_memory;      /* bytes per connection for the request line,
                                      * headers and the answer's headers: longer
                                      * requests get 414/431 or are closed. Proofs
                                      * of up to a quarter of it are sent (their hex
                                      * takes half), larger ones answer 500.
                                      * Default 32768 (8 KiB proofs), at least 8192 */
    uint32_t requests_per_second;    /* per client address (IPv6: per /64), over it
                                      * 429; default 50 */
    uint32_t request_burst;          /* requests a quiet client may send at once;
                                      * default 100 */
    uint32_t threads;                /* worker threads; default 4, at most 64 */
} gd_http_limits;

/* The defaults above. */
gd_http_limits gd_http_limits_default(void);

typedef struct gd_http_server gd_http_server;

/* Listens on listen ("127.0.0.1:8080", "0.0.0.0:8080", "localhost:0",
 * "[::1]:0"; port 0 picks a free one) and serves until
 * gd_http_server_stop. limits NULL means gd_http_limits_default(). h is
 * copied; h->ctx must outlive the server. Writes the bound "host:port" into
 * bound (bound_cap bytes; may be NULL with 0). Warns (common/log.h) when
 * the host is not a loopback address. Returns GD_ERR_INVALID for a bad
 * address or limits, GD_ERR_NETWORK with the system's reason when the
 * address cannot be bound, GD_ERR_NOMEM. */
gd_status gd_http_server_start(gd_http_server **out, const char *listen,
                               const gd_http_limits *limits, const gd_http_handler *h,
                               char *bound, size_t bound_cap) GD_MUST_CHECK;

/* Closes the listening socket and every connection, waits for the threads;
 * no handler call runs after it returns. NULL is a no-op. */
void gd_http_server_stop(gd_http_server *server);

#endif
