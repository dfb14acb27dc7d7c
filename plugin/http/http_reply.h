/* The answers of the daemon's HTTP server (plugin/http/http_server.c), built and
 * queued on a libmicrohttpd connection: short text errors, bodies from
 * memory, and files in whole or in one byte range. Internal to the server. */
#ifndef GD_PLUGIN_HTTP_HTTP_REPLY_H
#define GD_PLUGIN_HTTP_HTTP_REPLY_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/http/http_path.h"
#include "plugin/member/artifact_request.h"

/* One request, from its request line to its completion. */
typedef struct gd_http_exchange {
    /* The raw request target; one longer than GD_HTTP_PATH_MAX is kept
     * cut at GD_HTTP_PATH_MAX + 1 bytes, which the path parser refuses. */
    char target[GD_HTTP_PATH_MAX + 2];
    bool answered;       /* a response is queued */
    bool head;           /* HEAD: headers only, no Range */
    size_t proof_max;    /* largest proof, in bytes, sent in X-Gd-Proof */
    uint64_t body_len;   /* body bytes of the queued response, for count() */
} gd_http_exchange;

/* "text\n" as text/plain with status code; extra_name/extra_value, when not
 * NULL, add one header (Allow for 405, Retry-After for 429, ...). */
enum MHD_Result gd_http_reply_text(struct MHD_Connection *conn, gd_http_exchange *ex,
                                   unsigned code, const char *text, const char *extra_name,
                                   const char *extra_value);

/* The handler's answer a: its body (taken from a, without a copy) or its
 * file, with Range honoured for files on GET. */
enum MHD_Result gd_http_reply_answer(struct MHD_Connection *conn, gd_http_exchange *ex,
                                     gd_artifact_answer *a);

#endif
