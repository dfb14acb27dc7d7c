/* The daemon's HTTP request line, parsed into what a peer asks for.
 *
 * Pure and strict: the method and the raw request target (exactly as
 * received, before any percent-decoding) either name one of the paths of
 * docs/node.md ("HTTP") or are refused with the HTTP status to answer. There
 * is one spelling of each request, so nothing that reaches the artifact
 * store can be a traversal or an alias of another path. */
#ifndef GD_PLUGIN_HTTP_HTTP_PATH_H
#define GD_PLUGIN_HTTP_HTTP_PATH_H

#include "common/status.h"
#include "plugin/member/artifact_request.h"

/* Longest request target accepted, in bytes (the paths above need < 120). */
#define GD_HTTP_PATH_MAX 512

/* Parses method ("GET" or "HEAD", case-sensitive as HTTP methods are) and
 * url (the request target, e.g. "/v1/runs/7/rounds/3/payload") into *out.
 *
 * Accepted: exactly the paths listed in plugin/member/artifact_request.h, made of
 * '/'-separated segments; numbers are decimal digits without sign or
 * leading zeros ("0" itself is fine) that fit the field (run and round:
 * uint64; leaf and chunk: uint32). A '?' may only end the target with
 * nothing after it.
 *
 * Returns GD_OK with *out filled and *http_status = 200, or:
 *   GD_ERR_INVALID  405: a method other than GET or HEAD
 *   GD_ERR_LIMIT    414: a target longer than GD_HTTP_PATH_MAX
 *   GD_ERR_PARSE    400: not starting with '/', a query, '%', "..", "//",
 *                   a trailing '/', a byte outside visible ASCII, or a
 *                   malformed number in a known path
 *   GD_ERR_NOT_FOUND 404: well formed, but not a path that is served
 * *out is written only on success. The detail (gd_error_detail) never
 * quotes the target, so it is safe to send back as the answer's text. */
gd_status gd_http_path_parse(gd_artifact_req *out, const char *method, const char *url,
                             unsigned *http_status) GD_MUST_CHECK;

/* The one spelling of req's path (what gd_http_path_parse accepts for it);
 * cap >= GD_HTTP_PATH_MAX. */
void gd_http_path_format(const gd_artifact_req *req, char *out, size_t cap);

#endif
